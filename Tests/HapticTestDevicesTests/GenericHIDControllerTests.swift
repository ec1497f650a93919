import HapticTestDevices
import LinuxInput
import Testing

/// Whether `needle` occurs in `haystack` as a contiguous run.
private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
}

@Suite("Xbox Wireless Controller over Bluetooth (hid-microsoft)")
struct XboxWirelessControllerTests {
    @Test func identityMatchesTheBluetoothModel1914() {
        let identity = XboxWirelessController().identity
        #expect(identity.bus == .bluetooth)
        #expect(identity.vendor == 0x045e)
        #expect(identity.product == 0x0b13)
        #expect(identity.name == "Xbox Wireless Controller")
        #expect(identity.reportDescriptor.count == 283)
        #expect(Array(identity.reportDescriptor.prefix(8)) == [0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01])
        #expect(Array(identity.reportDescriptor.suffix(2)) == [0xc0, 0xc0])
    }

    @Test func descriptorDeclaresRumbleOutputReport3() {
        let descriptor = XboxWirelessController.reportDescriptor
        // PID page, Set Effect usage, report id 3.
        #expect(contains(descriptor, [0x05, 0x0f, 0x09, 0x21, 0x85, 0x03]))
        // Four 8-bit magnitudes limited to 100, as outputs.
        #expect(contains(descriptor, [0x09, 0x70, 0x15, 0x00, 0x25, 0x64, 0x75, 0x08, 0x95, 0x04, 0x91, 0x02]))
    }

    @Test func overridesNameAndAddress() {
        let identity = XboxWirelessController(name: "Pad", uniq: "11:22:33:44:55:66").identity
        #expect(identity.name == "Pad")
        #expect(identity.uniq == "11:22:33:44:55:66")
    }

    @Test func decodesTheReportsTheDriverSent() {
        var pad = XboxWirelessController()
        let cases: [(String, Double, Double)] = [
            ("030300006414ff00ff", 1.0, 0.2),
            ("03030000300aff00ff", 0.48, 0.1),
            ("030300000300ff00ff", 0.03, 0.0),
            ("030300000000ff00ff", 0.0, 0.0),
        ]
        for (hex, strong, weak) in cases {
            let response = pad.receive(bytes(hex), via: .interrupt)
            #expect(response.motors == EmulatedMotorOutput(strong: strong, weak: weak), "\(hex)")
            #expect(response.replies.isEmpty)
        }
    }

    @Test func keepsTimingAndTriggerFields() {
        var pad = XboxWirelessController()
        _ = pad.receive(bytes("030f0a145028ff00ff"), via: .interrupt)
        let rumble = pad.lastRumble
        #expect(rumble?.leftTrigger == 10)
        #expect(rumble?.rightTrigger == 20)
        #expect(rumble?.duration == 255)
        #expect(rumble?.startDelay == 0)
        #expect(rumble?.loopCount == 255)
        #expect(rumble?.bytes == bytes("030f0a145028ff00ff"))
    }

    @Test func disabledMotorsStayOffAndLevelsCapAt100() {
        let weakOnly = XboxRumbleReport(enable: XboxRumbleReport.enableWeak, strong: 80, weak: 40)
        #expect(weakOnly.motors == EmulatedMotorOutput(strong: 0, weak: 0.4))
        let overRange = XboxRumbleReport(enable: 0x03, strong: 200, weak: 101)
        #expect(overRange.motors == EmulatedMotorOutput(strong: 1, weak: 1))
    }

    @Test func ignoresOtherReports() {
        var pad = XboxWirelessController()
        #expect(pad.receive(bytes("0403000064"), via: .interrupt) == .ignored)
        #expect(pad.receive(bytes("0303000064"), via: .interrupt) == .ignored)
        #expect(pad.lastRumble == nil)
    }

    @Test func answersNoGetReport() {
        var pad = XboxWirelessController()
        #expect(pad.getReport(id: 3, type: .output) == nil)
        #expect(pad.getReport(id: 1, type: .feature) == nil)
        #expect(pad.inputReportInterval == nil)
    }

    @Test func driverScalingTruncatesToPercent() {
        #expect(XboxRumbleReport.percent(fromRumbleMagnitude: 0xffff) == 100)
        #expect(XboxRumbleReport.percent(fromRumbleMagnitude: 0xfffe) == 99)
        #expect(XboxRumbleReport.percent(fromRumbleMagnitude: 0x8000) == 50)
        #expect(XboxRumbleReport.percent(fromRumbleMagnitude: 655) == 0)
        #expect(XboxRumbleReport.percent(fromRumbleMagnitude: 656) == 1)
    }
}

@Suite("DragonRise USB gamepad (hid-dr)")
struct DragonRiseGamepadTests {
    @Test func identityMatchesTheUSBPad() {
        let identity = DragonRiseGamepad().identity
        #expect(identity.bus == .usb)
        #expect(identity.vendor == 0x0079)
        #expect(identity.product == 0x0006)
        #expect(identity.version == 0x0107)
        #expect(identity.name == "DragonRise Inc.   Generic   USB  Joystick  ")
        #expect(identity.reportDescriptor.count == 101)
    }

    @Test func descriptorHasTheSevenByteOutputReportTheDriverNeeds() {
        // hid-dr refuses force feedback unless the first output report's first field has 7 values.
        let descriptor = DragonRiseGamepad.reportDescriptor
        let outputField: [UInt8] = [0x75, 0x08, 0x95, 0x07, 0x46, 0xff, 0x00, 0x26, 0xff, 0x00, 0x09, 0x02, 0x91, 0x02]
        #expect(contains(descriptor, outputField))
        #expect(!contains(descriptor, [0x85]))  // no report ids
    }

    @Test func decodesARumbleAsTheDriverSendsIt() {
        var pad = DragonRiseGamepad()
        let set = pad.receive(bytes("51003300ff0000"), via: .interrupt)
        #expect(set.motors == EmulatedMotorOutput(strong: 1, weak: Double(0x33) / 255))
        #expect(pad.receive(bytes("fafe0000000000"), via: .interrupt) == .ignored)
        #expect(pad.motors == EmulatedMotorOutput(strong: 1, weak: Double(0x33) / 255))
        let stop = pad.receive(bytes("f3000000000000"), via: .interrupt)
        #expect(stop.motors == .off)
        #expect(pad.motors == .off)
    }

    @Test func acceptsSetReportFormLedByReportNumberZero() {
        var pad = DragonRiseGamepad()
        let set = pad.receive(bytes("0051001f009d0000"), via: .setReport(.output))
        #expect(set.motors == EmulatedMotorOutput(strong: Double(0x9d) / 255, weak: Double(0x1f) / 255))
        #expect(pad.receive(bytes("00f3000000000000"), via: .setReport(.output)).motors == .off)
    }

    @Test func commandsRoundTrip() {
        let commands: [DragonRiseCommand] = [.setLevels(strong: 0x9d, weak: 0x1f), .commit, .stop]
        for command in commands {
            #expect(DragonRiseCommand(bytes: command.bytes ?? []) == command)
        }
        #expect(DragonRiseCommand(bytes: [0x51, 0x00]) == .unknown)
        #expect(DragonRiseCommand(bytes: bytes("01020304050607")) == .unknown)
    }

    @Test func weakLevelTenRacesTheStrongMotor() {
        let levels = DragonRiseGamepad.motorLevels(strong: 0, weak: 0x0a)
        #expect(levels == EmulatedMotorOutput(strong: 1, weak: 10.0 / 255))
    }

    @Test func driverScalingMatchesHidDr() {
        let full = DragonRiseGamepad.levels(fromRumbleStrong: 0xffff, weak: 0x3333)
        #expect(full.strong == 0xff)
        #expect(full.weak == 0x33)
        let low = DragonRiseGamepad.levels(fromRumbleStrong: 0x0101, weak: 0x0a0a)
        #expect(low.strong == 0x01)
        #expect(low.weak == 0x0b)
    }

    @Test func answersTheInputReportOnly() {
        var pad = DragonRiseGamepad()
        #expect(pad.getReport(id: 0, type: .input) == [0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x0f, 0x00, 0x00])
        #expect(pad.getReport(id: 0, type: .feature) == nil)
        #expect(pad.getReport(id: 0, type: .output) == nil)
    }
}
