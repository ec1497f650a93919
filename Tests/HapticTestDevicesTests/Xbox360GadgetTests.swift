import HapticTestDevices
import Testing

@Suite("Xbox 360 wired pad as a USB gadget")
struct Xbox360GadgetTests {
    let gadget = Xbox360Gadget()

    /// The exact block the prototype wrote to `ep0` and the 6.1 kernel accepted before xpad bound the pad.
    static let acceptedDescriptorBlock: [UInt8] = [
        0x03, 0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x43, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x00,
        0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0x5d, 0x01, 0x00,
        0x07, 0x05, 0x81, 0x03, 0x20, 0x00, 0x04,
        0x07, 0x05, 0x01, 0x03, 0x20, 0x00, 0x08,
        0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0x5d, 0x01, 0x00,
        0x07, 0x05, 0x81, 0x03, 0x20, 0x00, 0x06,
        0x07, 0x05, 0x01, 0x03, 0x20, 0x00, 0x07,
    ]

    static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    /// The models served as USB gadgets (the kernel tests name the gadget stack, not /dev/uhid, when theirs is
    /// missing): exactly those whose transport is a gadget.
    @Test func gadgetModelsAreTheXbox360DragonRiseAndPIDJoystick() {
        #expect(EmulatedModel.allCases.filter(\.overUSBGadget) == [.xbox360, .dragonrise, .pidJoystick])
        for model in EmulatedModel.allCases {
            #expect(model.transport.contains("gadget") == model.overUSBGadget, "\(model.rawValue)")
        }
    }

    @Test func descriptorBlockMatchesWhatTheKernelAccepted() {
        #expect(gadget.descriptorBlock == Self.acceptedDescriptorBlock)
    }

    @Test func descriptorBlockHeader() {
        let block = gadget.descriptorBlock
        #expect(Self.le32(block, 0) == 3)  // FUNCTIONFS_DESCRIPTORS_MAGIC_V2
        #expect(Self.le32(block, 4) == UInt32(block.count))
        #expect(Self.le32(block, 8) == 0x43)  // full speed, high speed, all control recipients
        #expect(Self.le32(block, 12) == 3)
        #expect(Self.le32(block, 16) == 3)
        #expect(block.count == 20 + 2 * (9 + 7 + 7))
    }

    @Test func eachSpeedSetIsOneVendorInterfaceWithTwoInterruptEndpoints() {
        for speed in [USBGadgetSpeed.full, .high] {
            let set = Xbox360Gadget.descriptors(for: speed)
            #expect(set.map(\.count) == [9, 7, 7])
            #expect(set.allSatisfy { $0[0] == UInt8($0.count) })
            #expect(Array(set[0][1...7]) == [0x04, 0, 0, 2, 0xff, 0x5d, 0x01])
            #expect(set[1][1] == 0x05 && set[1][2] == 0x81 && set[1][3] == 0x03)
            #expect(set[2][1] == 0x05 && set[2][2] == 0x01 && set[2][3] == 0x03)
            #expect(set[1][4] == 32 && set[1][5] == 0 && set[2][4] == 32 && set[2][5] == 0)
        }
        #expect(Xbox360Gadget.descriptors(for: .full)[1][6] == 4)
        #expect(Xbox360Gadget.descriptors(for: .full)[2][6] == 8)
        #expect(Xbox360Gadget.descriptors(for: .high)[1][6] == 6)  // 2^5 microframes = 4 ms
        #expect(Xbox360Gadget.descriptors(for: .high)[2][6] == 7)  // 8 ms
    }

    @Test func vendorDescriptorIsKeptOutOfTheBlock() {
        #expect(Xbox360Gadget.vendorDescriptor.count == 17)
        #expect(Xbox360Gadget.vendorDescriptor[1] == 0x21)
        #expect(!gadget.descriptorBlock.contains(0x21))
    }

    @Test func stringsBlockIsTheEmptyHeader() {
        #expect(gadget.stringsBlock == [2, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func stringsBlockWithStrings() {
        let block = FunctionFS.stringsBlock(strings: ["A", "bc"])
        #expect(block.count == 16 + 2 + 2 + 3)
        #expect(Self.le32(block, 4) == UInt32(block.count))
        #expect(Self.le32(block, 8) == 2 && Self.le32(block, 12) == 1)
        #expect(Array(block[16...]) == [0x09, 0x04, 0x41, 0x00, 0x62, 0x63, 0x00])
    }

    @Test func identityIsTheRealPads() {
        let identity = gadget.identity
        #expect(identity.vendorID == 0x045e && identity.productID == 0x028e)
        #expect(identity.deviceRelease == 0x0114 && identity.usbVersion == 0x0200)
        #expect(identity.maxPacketSize0 == 8 && identity.maxSpeed == .full)
        let attributes = Dictionary(uniqueKeysWithValues: identity.configfsAttributes.map { ($0.path, $0.value) })
        #expect(attributes["idVendor"] == "0x045e")
        #expect(attributes["idProduct"] == "0x028e")
        #expect(attributes["bcdDevice"] == "0x0114")
        #expect(attributes["bDeviceClass"] == "0xff")
        #expect(attributes["max_speed"] == "full-speed")
        #expect(attributes["strings/0x409/product"] == "Controller")
        #expect(attributes["configs/c.1/MaxPower"] == "500")
        #expect(attributes["configs/c.1/bmAttributes"] == "0xa0")
    }

    @Test func configfsLayoutAndRemovalOrder() {
        #expect(USBGadgetIdentity.configfsDirectories(function: "x360").last == "functions/ffs.x360")
        let link = USBGadgetIdentity.configfsFunctionLink(function: "x360")
        #expect(link.target == "functions/ffs.x360" && link.link == "configs/c.1/ffs.x360")
        #expect(USBGadgetIdentity.configfsRemovalOrder(function: "x360").first == "configs/c.1/ffs.x360")
    }

    @Test func parsesEventsFromOneRead() {
        var bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]  // BIND
        bytes += [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0]  // ENABLE
        bytes += [0xc1, 0x01, 0x00, 0x01, 0x00, 0x00, 0x14, 0x00, 4, 0, 0, 0]  // SETUP
        let events = FunctionFS.parseEvents(bytes)
        #expect(events.map(\.type) == [.bind, .enable, .setup])
        #expect(events[0].setup == nil)
        let setup = events[2].setup
        #expect(setup?.requestType == 0xc1 && setup?.request == 0x01)
        #expect(setup?.value == 0x0100 && setup?.index == 0 && setup?.length == 20)
        #expect(setup?.isDeviceToHost == true && setup?.kind == 2 && setup?.recipient == 1)
    }

    @Test func skipsUnknownAndPartialEvents() {
        let bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 0, 3, 0]
        #expect(FunctionFS.parseEvents(bytes).isEmpty)
        #expect(FunctionFS.parseEvents([0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0]) == [.init(type: .suspend)])
    }

    @Test func decodesRumblePackets() {
        #expect(Xbox360Gadget.parseOutput([0, 8, 0, 0xff, 0x33, 0, 0, 0]) == .rumble(strong: 255, weak: 51))
        let motors = Xbox360Gadget.motors(for: [0, 8, 0, 0xff, 0x33, 0, 0, 0])
        #expect(motors?.strong == 1)
        #expect(abs((motors?.weak ?? 0) - 0.2) < 1e-9)
        #expect(Xbox360Gadget.motors(for: [0, 8, 0, 0, 0, 0, 0, 0]) == .off)
    }

    @Test func ledAndOtherPacketsSetNoMotors() {
        #expect(Xbox360Gadget.parseOutput([1, 3, 2]) == .led(2))
        #expect(Xbox360Gadget.motors(for: [1, 3, 2]) == nil)
        #expect(Xbox360Gadget.motors(for: [0, 8, 0]) == nil)
        #expect(Xbox360Gadget.parseOutput([2, 8, 3]) == .unknown([2, 8, 3]))
    }

    @Test func inputReports() {
        let neutral = Xbox360Gadget.inputReport()
        #expect(neutral.count == 20)
        #expect(neutral == [0x00, 0x14] + [UInt8](repeating: 0, count: 18))
        let pressed = Xbox360Gadget.inputReport(buttons: 0x1000, rightTrigger: 255, leftStick: (x: -32768, y: 1))
        #expect(Array(pressed[2...7]) == [0x00, 0x10, 0x00, 0xff, 0x00, 0x80])
        #expect(Array(pressed[8...9]) == [0x01, 0x00])
    }

    @Test func answersTheVendorRequestsAndStallsTheRest() {
        func request(_ type: UInt8, _ value: UInt16, _ length: UInt16, request: UInt8 = 1) -> FunctionFS.ControlRequest
        {
            .init(requestType: type, request: request, value: value, index: 0, length: length)
        }
        guard case .data(let capabilities) = gadget.answer(request(0xc1, 0x0100, 20)) else {
            Issue.record("input capabilities not answered")
            return
        }
        #expect(capabilities.count == 20 && capabilities[0] == 0x00 && capabilities[1] == 0x14)
        #expect(gadget.answer(request(0xc1, 0x0000, 8)) == .data([0x00, 0x08, 0x00, 0xff, 0xff, 0, 0, 0]))
        #expect(gadget.answer(request(0xc0, 0x0000, 4)) == .data([0x0e, 0x3d, 0x1a, 0x70]))
        #expect(gadget.answer(request(0xc1, 0x0000, 2)) == .data([0x00, 0x08]))
        #expect(gadget.answer(request(0xc1, 0x0000, 8, request: 7)) == .stall)
        #expect(gadget.answer(request(0x41, 0x0000, 0, request: 0)) == .stall)
    }
}
