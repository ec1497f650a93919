import HapticTestDevices
import LinuxInput
import Testing

/// The emulated Switch Pro Controller: identity, HD rumble decoding against hid-nintendo's encoding, and
/// the replies to what the driver asks while probing (in the order 6.1 asks it).
@Suite struct SwitchProControllerTests {
    // MARK: Identity

    @Test func usbIdentityIsTheWiredProController() {
        let pad = SwitchProController()
        #expect(pad.identity.bus == .usb)
        #expect(pad.identity.vendor == 0x057e && pad.identity.product == 0x2009)
        #expect(pad.identity.version == 0x0210)
        #expect(pad.identity.name == "Nintendo Co., Ltd. Pro Controller")
        #expect(pad.identity.reportDescriptor.count == 203)
        #expect(
            Array(pad.identity.reportDescriptor.prefix(10)) == [
                0x05, 0x01, 0x15, 0x00, 0x09, 0x04, 0xa1, 0x01, 0x85, 0x30,
            ])
        #expect(pad.identity.reportDescriptor.last == 0xc0)
    }

    @Test func bluetoothIdentityUsesTheBluetoothDescriptorAndAddress() {
        var pad = SwitchProController(transport: .bluetooth)
        #expect(pad.identity.bus == .bluetooth)
        #expect(pad.identity.name == "Pro Controller")
        #expect(pad.identity.uniq == "98:b6:e9:4a:21:5c")
        #expect(pad.identity.reportDescriptor.count == 170)
        #expect(pad.getReport(id: 0x30, type: .input) == nil)
    }

    @Test func nameAndUniqCanBeOverridden() {
        let pad = SwitchProController(name: "Pad", uniq: "serial")
        #expect(pad.identity.name == "Pad" && pad.identity.uniq == "serial")
    }

    // MARK: HD rumble

    @Test func frequencyTableMatchesTheDriversEndpoints() {
        #expect(SwitchRumbleActuator.frequency(exponent: 0x41) == 41)
        #expect(SwitchRumbleActuator.frequency(exponent: 0x40 + 0x7f) == 626)
        #expect(SwitchRumbleActuator.frequency(exponent: 0x60 + 1) == 82)
        #expect(SwitchRumbleActuator.frequency(exponent: 0x60 + 127) == 1253)
        #expect(SwitchRumbleActuator.frequency(exponent: 0x40 + 0x2b) == 102)
        #expect(SwitchRumbleActuator.amplitudeSteps.count == 101)
        #expect(SwitchRumbleActuator.maximumAmplitude == 1003)
    }

    @Test func neutralRumbleIsSilenceAtTheDefaultFrequencies() {
        let side = SwitchRumbleActuator(bytes: [0x00, 0x01, 0x40, 0x40])
        #expect(side.highFrequency == 320 && side.lowFrequency == 160)
        #expect(side.highAmplitude == 0 && side.lowAmplitude == 0)
    }

    @Test func fullRumbleDecodesToOne() {
        let side = SwitchRumbleActuator(bytes: [0x00, 0xc9, 0x40, 0x72])
        #expect(side.highAmplitudeIndex == 100 && side.lowAmplitudeIndex == 100)
        #expect(side.highAmplitude == 1 && side.lowAmplitude == 1)
    }

    /// Output report 0x10 captured from hid-nintendo on 6.1 at the peak of `haptics play thud`.
    @Test func capturedThudPeakDecodesStrongLeftWeakRight() throws {
        var pad = Self.probedPad()
        let response = pad.receive(
            [0x10, 0x0d, 0x00, 0xc9, 0x40, 0x72, 0x00, 0x3b, 0xc0, 0x4e], via: .interrupt)
        let motors = try #require(response.motors)
        #expect(motors.strong == 1)
        #expect(motors.weak == 206.0 / 1003.0)
        #expect(motors.strongFrequency == 160 && motors.weakFrequency == 320)
        #expect(response.replies.isEmpty)
        #expect(pad.lastPacketNumber == 0x0d)
    }

    @Test func decodingInvertsTheDriversEncodingForEveryMagnitude() {
        for magnitude in stride(from: 0, through: 65535, by: 61) {
            let frame = SwitchRumbleFrame.driverFrame(
                strongMagnitude: UInt16(magnitude), weakMagnitude: UInt16(65535 - magnitude))
            let decoded = SwitchRumbleFrame(bytes: frame.bytes)
            #expect(decoded == frame)
            let scaled = Double(magnitude * 1003 / 65535) / 1003
            #expect(decoded.motors.strong >= scaled && decoded.motors.strong - scaled < 0.06)
            #expect(decoded.left.highAmplitude == decoded.left.lowAmplitude)
        }
        let half = SwitchRumbleFrame.driverFrame(strongMagnitude: 0x8000, weakMagnitude: 0)
        #expect(half.bytes == [0x00, 0x89, 0x40, 0x62, 0x00, 0x01, 0x40, 0x40])
    }

    @Test func driverFrequenciesRoundUpAndClamp() {
        let frame = SwitchRumbleFrame.driverFrame(
            strongMagnitude: 0xffff, weakMagnitude: 0xffff, lowFrequency: 20, highFrequency: 5000)
        #expect(frame.left.lowFrequency == 41 && frame.left.highFrequency == 1253)
        let between = SwitchRumbleFrame.driverFrame(
            strongMagnitude: 1, weakMagnitude: 1, lowFrequency: 101, highFrequency: 100)
        #expect(between.left.lowFrequency == 102 && between.left.highFrequency == 102)
    }

    @Test func rumbleIsIgnoredUntilVibrationIsEnabled() {
        var pad = SwitchProController()
        let full: [UInt8] = [0x10, 0x00, 0x00, 0xc9, 0x40, 0x72, 0x00, 0xc9, 0x40, 0x72]
        #expect(pad.receive(full, via: .interrupt).motors?.strong == 0)
        _ = pad.receive(Self.subcommand(0x48, [0x01]), via: .interrupt)
        #expect(pad.vibrationEnabled)
        #expect(
            pad.receive(full, via: .interrupt).motors
                == EmulatedMotorOutput(
                    strong: 1, weak: 1, strongFrequency: 160, weakFrequency: 320))
    }

    // MARK: Probe

    @Test func usbCommandsAreAnsweredAsTheWiredControllerDoes() {
        var pad = SwitchProController()
        let handshake = pad.receive([0x80, 0x02], via: .interrupt).replies
        #expect(handshake.count == 1 && Array(handshake[0].prefix(2)) == [0x81, 0x02])
        #expect(handshake[0].count == 64)
        #expect(pad.handshakeDone)
        #expect(pad.receive([0x80, 0x03], via: .interrupt).replies.first?.prefix(2) == [0x81, 0x03])
        #expect(pad.receive([0x80, 0x04], via: .interrupt).replies.isEmpty)
        let status = pad.receive([0x80, 0x01], via: .interrupt).replies[0]
        #expect(Array(status[0..<10]) == [0x81, 0x01, 0x00, 0x03, 0x5c, 0x21, 0x4a, 0xe9, 0xb6, 0x98])
    }

    @Test func bluetoothControllerLeavesUSBCommandsUnanswered() {
        var pad = SwitchProController(transport: .bluetooth)
        #expect(pad.receive([0x80, 0x02], via: .interrupt).replies.isEmpty)
    }

    @Test func deviceInfoNamesAProControllerAndItsAddress() {
        var pad = SwitchProController()
        let reply = Self.reply(&pad, 0x02, [])
        #expect(reply[0] == 0x21 && reply[13] == 0x82 && reply[14] == 0x02)
        #expect(reply[17] == 0x03)
        #expect(Array(reply[19..<25]) == SwitchProController.defaultMACAddress)
        #expect(reply.count == 64)
    }

    @Test func userCalibrationIsAbsent() {
        var pad = SwitchProController()
        for address in SwitchProFlash.userCalibrationMagicAddresses {
            let reply = Self.spiRead(&pad, address: address, count: 2)
            #expect(reply == [0xff, 0xff])
        }
    }

    @Test func stickCalibrationParsesToPlausibleRanges() {
        var pad = SwitchProController()
        let left = Self.spiRead(&pad, address: 0x603d, count: 9)
        let right = Self.spiRead(&pad, address: 0x6046, count: 9)
        // The driver's order: left is above, center, below; right is center, below, above.
        let l = [0, 3, 6].map { Self.unpack(Array(left[$0..<$0 + 3])) }
        let r = [0, 3, 6].map { Self.unpack(Array(right[$0..<$0 + 3])) }
        for (above, center, below) in [(l[0], l[1], l[2]), (r[2], r[0], r[1])] {
            #expect(center.0 - below.0 > 0 && center.0 + above.0 < 4096)
            #expect(center.1 - below.1 > 0 && center.1 + above.1 < 4096)
            #expect(abs(center.0 - 2048) < 200 && abs(center.1 - 2048) < 200)
        }
        #expect(l[1] == (2020, 2075))
    }

    @Test func imuCalibrationHasNonZeroDivisors() {
        var pad = SwitchProController()
        let raw = Self.spiRead(&pad, address: 0x6020, count: 24)
        let values = stride(from: 0, to: 24, by: 2).map {
            Int(Int16(bitPattern: UInt16(raw[$0]) | UInt16(raw[$0 + 1]) << 8))
        }
        for axis in 0..<3 {
            #expect(values[3 + axis] == 16384 && values[9 + axis] == 13371)
            #expect(values[3 + axis] - values[axis] != 0 && values[9 + axis] - values[6 + axis] != 0)
        }
    }

    /// The 6.1 probe after the USB handshake, as captured in the bench: every subcommand gets a 0x21 reply
    /// naming it, and full reports stream once the mode is set.
    @Test func probeSequenceIsAcknowledgedInOrder() throws {
        var pad = SwitchProController()
        #expect(pad.nextInputReport() == nil)
        let probe: [[UInt8]] = [
            [0x10, 0x10, 0x80, 0x00, 0x00, 0x02], [0x10, 0x1b, 0x80, 0x00, 0x00, 0x02],
            [0x10, 0x3d, 0x60, 0x00, 0x00, 0x09], [0x10, 0x46, 0x60, 0x00, 0x00, 0x09],
            [0x10, 0x26, 0x80, 0x00, 0x00, 0x02], [0x10, 0x20, 0x60, 0x00, 0x00, 0x18],
            [0x03, 0x30], [0x48, 0x01], [0x40, 0x01], [0x02], [0x30, 0x01], [0x38, 0x01, 0x00, 0x00, 0x11, 0x11],
        ]
        for request in probe {
            let reply = Self.reply(&pad, request[0], Array(request.dropFirst()))
            #expect(reply[0] == 0x21 && reply[13] & 0x80 != 0 && reply[14] == request[0])
            #expect(reply.count >= 49)
        }
        #expect(pad.reportMode == 0x30 && pad.imuEnabled && pad.vibrationEnabled)
        #expect(pad.playerLights == 0x01 && pad.homeLight == [0x01, 0x00, 0x00, 0x11, 0x11])
        #expect(pad.subcommandLog == probe.map { $0[0] })
        let next = pad.nextInputReport()
        let report = try #require(next)
        #expect(report.count == 64 && report[0] == 0x30)
        #expect(report[12] != 0)
        #expect(Self.unpack(Array(report[6..<9])) == (2020, 2075))
        #expect(pad.inputReportInterval == 0.015)
    }

    @Test func bluetoothInputReportsAreFortyNineBytes() {
        var pad = SwitchProController(transport: .bluetooth)
        _ = pad.receive(Self.subcommand(0x03, [0x30]), via: .interrupt)
        #expect(pad.nextInputReport()?.count == 49)
    }

    // MARK: Helpers

    /// Output report 0x01 as the driver builds it while probing: all-zero rumble, then the subcommand.
    static func subcommand(_ id: UInt8, _ data: [UInt8]) -> [UInt8] {
        [0x01, 0x00] + [UInt8](repeating: 0, count: 8) + [id] + data
    }

    static func reply(_ pad: inout SwitchProController, _ id: UInt8, _ data: [UInt8]) -> [UInt8] {
        let replies = pad.receive(subcommand(id, data), via: .interrupt).replies
        #expect(replies.count == 1)
        return replies.first ?? []
    }

    /// The data of an SPI flash read reply (after the echoed address and size).
    static func spiRead(_ pad: inout SwitchProController, address: Int, count: UInt8) -> [UInt8] {
        let request = [UInt8(address & 0xff), UInt8(address >> 8 & 0xff), 0, 0, count]
        let reply = reply(&pad, 0x10, request)
        #expect(reply[13] == 0x90 && Array(reply[15..<20]) == request)
        return Array(reply[20..<20 + Int(count)])
    }

    /// Two 12-bit values from three bytes, as the driver extracts sticks and stick calibration.
    static func unpack(_ b: [UInt8]) -> (Int, Int) {
        (Int(b[0]) | Int(b[1] & 0x0f) << 8, Int(b[1]) >> 4 | Int(b[2]) << 4)
    }

    static func probedPad() -> SwitchProController {
        var pad = SwitchProController()
        _ = pad.receive(subcommand(0x03, [0x30]), via: .interrupt)
        _ = pad.receive(subcommand(0x48, [0x01]), via: .interrupt)
        return pad
    }
}
