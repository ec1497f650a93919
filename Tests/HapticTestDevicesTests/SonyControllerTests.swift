// The DualSense and DualShock 4 models: identities and descriptors, the feature reports hid-playstation and
// hid-sony read while probing (sizes, MAC placement, CRCs, calibration the drivers accept), and the decoding
// of output reports as the 6.1 drivers send them (byte strings captured from the drivers in the VM bench).
import HapticTestDevices
import LinuxInput
import Testing

/// A report of `count` zero bytes with the given bytes set.
private func report(_ count: Int, _ values: [Int: UInt8]) -> [UInt8] {
    var result = [UInt8](repeating: 0, count: count)
    for (offset, value) in values { result[offset] = value }
    return result
}

/// A little-endian signed 16-bit value from a report.
private func int16(_ report: [UInt8], _ offset: Int) -> Int {
    Int(Int16(bitPattern: UInt16(report[offset]) | UInt16(report[offset + 1]) << 8))
}

@Suite("PlayStation helpers")
struct PlayStationHelperTests {
    @Test func crcMatchesTheStandardCheckValue() {
        // CRC-32 of "123456789" is 0xcbf43926; the seed byte is simply the first byte hashed.
        #expect(PlayStationCRC.checksum(seed: 0x31, bytes: Array("23456789".utf8)[...]) == 0xcbf4_3926)
    }

    @Test func crcAcceptsACapturedBluetoothReport() {
        // hid-playstation's empty vibration-v2 report over Bluetooth, CRC included.
        let captured = bytes(
            "31b01002" + String(repeating: "00", count: 37) + "04" + String(repeating: "00", count: 32) + "d94d9d44")
        #expect(captured.count == 78)
        #expect(PlayStationCRC.isValid(captured, seed: PlayStationCRC.outputSeed))
        #expect(!PlayStationCRC.isValid(captured, seed: PlayStationCRC.inputSeed))
    }

    @Test func signThenValidate() {
        var signed = [UInt8](repeating: 0x5a, count: 20)
        PlayStationCRC.sign(&signed, seed: PlayStationCRC.featureSeed)
        #expect(PlayStationCRC.isValid(signed, seed: PlayStationCRC.featureSeed))
        signed[3] ^= 1
        #expect(!PlayStationCRC.isValid(signed, seed: PlayStationCRC.featureSeed))
    }

    @Test func macAddressesParseFormatAndReverse() {
        let address = PlayStationMAC.parse("aa:bb:cc:dd:ee:0f")
        #expect(address == [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x0f])
        #expect(PlayStationMAC.format([0xa0, 0x0b, 0x51, 0x5e, 0xd4, 0x10]) == "a0:0b:51:5e:d4:10")
        #expect(PlayStationMAC.reportOrder([1, 2, 3, 4, 5, 6]) == [6, 5, 4, 3, 2, 1])
        #expect(PlayStationMAC.parse("") == nil)
        #expect(PlayStationMAC.parse("aa:bb:cc:dd:ee") == nil)
        #expect(PlayStationMAC.parse("aa:bb:cc:dd:ee:zz") == nil)
    }
}

@Suite("DualSense model")
struct DualSenseModelTests {
    @Test func usbIdentity() {
        let pad = DualSense(transport: .usb)
        #expect(pad.identity.bus == .usb)
        #expect(pad.identity.vendor == 0x054c && pad.identity.product == 0x0ce6)
        #expect(pad.identity.name == "Sony Interactive Entertainment DualSense Wireless Controller")
        #expect(pad.identity.uniq == "")
        #expect(pad.identity.reportDescriptor.count == 257)
        #expect(pad.identity.reportDescriptor.prefix(8) == [0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01])
    }

    @Test func bluetoothIdentityCarriesTheAddress() {
        let pad = DualSense(transport: .bluetooth, uniq: "aa:bb:cc:dd:ee:ff")
        #expect(pad.identity.bus == .bluetooth)
        #expect(pad.identity.name == "DualSense Wireless Controller")
        #expect(pad.identity.uniq == "aa:bb:cc:dd:ee:ff")
        #expect(pad.identity.reportDescriptor.count == 279)
    }

    @Test func usbPairingReportCarriesTheCallersAddress() {
        var pad = DualSense(transport: .usb, uniq: "aa:bb:cc:dd:ee:ff")
        let reply = pad.getReport(id: 0x09, type: .feature)
        #expect(reply?.count == 20)
        #expect(reply?.prefix(7) == [0x09, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa])
    }

    @Test func bluetoothFeatureRepliesAreSized() {
        var pad = DualSense(transport: .bluetooth)
        for (id, size) in [(UInt8(0x09), 20), (0x20, 64), (0x05, 41)] {
            let reply = pad.getReport(id: id, type: .feature)
            #expect(reply?.count == size)
            #expect(reply?.first == id)
            #expect(reply.map { PlayStationCRC.isValid($0, seed: PlayStationCRC.featureSeed) } == true)
        }
        #expect(pad.getReport(id: 0x42, type: .feature) == nil)
        #expect(pad.getReport(id: 0x05, type: .input) == nil)
    }

    @Test(arguments: [
        (DualSense.FirmwareUpdateVersion.original, "compatible"), (DualSense.FirmwareUpdateVersion.vibrationV2, "v2"),
    ])
    func firmwareReportSelectsTheVibrationMode(version: UInt16, mode: String) {
        var pad = DualSense(transport: .usb, firmwareUpdateVersion: version)
        let reply = pad.getReport(id: 0x20, type: .feature)!
        #expect(UInt16(reply[44]) | UInt16(reply[45]) << 8 == version)
        #expect(pad.expectedVibrationMode == mode)
        #expect(reply[24...27] != [0, 0, 0, 0] && reply[28...31] != [0, 0, 0, 0])
    }

    @Test func calibrationIsUsable() {
        var pad = DualSense(transport: .usb)
        let reply = pad.getReport(id: 0x05, type: .feature)!
        #expect(reply.count == 41)
        // The driver divides by each gyro axis's plus minus minus reading and each accelerometer range.
        for plus in stride(from: 7, through: 31, by: 4) where plus != 19 {
            #expect(int16(reply, plus) - int16(reply, plus + 2) > 10000)
        }
        #expect(int16(reply, 19) + int16(reply, 21) > 0)
    }

    @Test func usbVibrationV2Report() {
        var pad = DualSense(transport: .usb)
        let captured = report(63, [0: 0x02, 1: 0x02, 3: 0x33, 4: 0xff, 39: 0x04])
        let motors = pad.receive(captured, via: .interrupt).motors
        #expect(motors == EmulatedMotorOutput(strong: 1, weak: 0x33 / 255.0, mode: "v2"))
    }

    @Test func usbCompatibleVibrationReport() {
        var pad = DualSense(transport: .usb, firmwareUpdateVersion: DualSense.FirmwareUpdateVersion.original)
        let captured = report(63, [0: 0x02, 1: 0x03, 3: 0x1f, 4: 0x9d])
        let motors = pad.receive(captured, via: .interrupt).motors
        #expect(motors == EmulatedMotorOutput(strong: 0x9d / 255.0, weak: 0x1f / 255.0, mode: "compatible"))
    }

    @Test func lightReportsLeaveTheMotorsAlone() {
        var pad = DualSense(transport: .usb)
        let lightbarSetup = report(63, [0: 0x02, 39: 0x02, 42: 0x02])
        let playerLEDs = report(63, [0: 0x02, 2: 0x14, 44: 0x04, 47: 0x80])
        #expect(pad.receive(lightbarSetup, via: .interrupt).motors == nil)
        #expect(pad.receive(playerLEDs, via: .interrupt).motors == nil)
    }

    @Test func bluetoothReportNeedsTagAndCRC() {
        var pad = DualSense(transport: .bluetooth)
        var sent = report(78, [0: 0x31, 1: 0x30, 2: 0x10, 3: 0x02, 5: 0x57, 6: 0xff, 41: 0x04])
        PlayStationCRC.sign(&sent, seed: PlayStationCRC.outputSeed)
        let motors = pad.receive(sent, via: .interrupt).motors
        #expect(motors == EmulatedMotorOutput(strong: 1, weak: 0x57 / 255.0, mode: "v2"))
        var corrupted = sent
        corrupted[6] = 0x10
        #expect(pad.receive(corrupted, via: .interrupt).motors == nil)
        var untagged = sent
        untagged[2] = 0
        PlayStationCRC.sign(&untagged, seed: PlayStationCRC.outputSeed)
        #expect(pad.receive(untagged, via: .interrupt).motors == nil)
    }

    @Test func bluetoothReportInSDLsHeaderForm() {
        // SDL's HIDAPI driver (and DS4Windows, pydualsense): 0x02 in byte 1, the common section from byte 2, here
        // with the v2 vibration flag at its byte 38, as SDL 2.26 sent it to the emulated pad in the bench.
        var pad = DualSense(transport: .bluetooth)
        var sent = report(78, [0: 0x31, 1: 0x02, 2: 0x02, 4: 0x40, 5: 0xff, 40: 0x04])
        PlayStationCRC.sign(&sent, seed: PlayStationCRC.outputSeed)
        #expect(
            pad.receive(sent, via: .interrupt).motors == EmulatedMotorOutput(strong: 1, weak: 0x40 / 255.0, mode: "v2"))
        // SDL's stop: every flag and level zero, rumble emulation off.
        var stop = report(78, [0: 0x31, 1: 0x02])
        PlayStationCRC.sign(&stop, seed: PlayStationCRC.outputSeed)
        #expect(pad.receive(stop, via: .interrupt).motors == EmulatedMotorOutput(strong: 0, weak: 0, mode: "off"))
        // Another low nibble in byte 1 is neither header: dropped.
        var unknown = sent
        unknown[1] = 0x05
        PlayStationCRC.sign(&unknown, seed: PlayStationCRC.outputSeed)
        #expect(pad.receive(unknown, via: .interrupt).motors == nil)
    }

    @Test func neutralInputReports() {
        var usb = DualSense(transport: .usb)
        let usbReport = usb.nextInputReport()!
        #expect(usbReport.count == 64 && usbReport[0] == 0x01 && usbReport[1] == 0x80 && usbReport[8] == 0x08)
        var bluetooth = DualSense(transport: .bluetooth)
        let bluetoothReport = bluetooth.nextInputReport()!
        #expect(bluetoothReport.count == 78 && bluetoothReport[0] == 0x31 && bluetoothReport[9] == 0x08)
        #expect(PlayStationCRC.isValid(bluetoothReport, seed: PlayStationCRC.inputSeed))
    }
}

@Suite("DualShock 4 model")
struct DualShock4ModelTests {
    @Test func identities() {
        let usb = DualShock4(transport: .usb)
        #expect(usb.identity.product == 0x09cc && usb.identity.bus == .usb)
        #expect(usb.identity.name == "Sony Interactive Entertainment Wireless Controller")
        #expect(usb.identity.reportDescriptor.count == 507)
        let bluetooth = DualShock4(transport: .bluetooth, uniq: "aa:bb:cc:dd:ee:03")
        #expect(bluetooth.identity.name == "Wireless Controller" && bluetooth.identity.bus == .bluetooth)
        #expect(bluetooth.identity.uniq == "aa:bb:cc:dd:ee:03")
        #expect(bluetooth.identity.reportDescriptor.count == 364)
    }

    @Test func usbProbeReplies() {
        var pad = DualShock4(transport: .usb, uniq: "aa:bb:cc:dd:ee:02")
        #expect(pad.getReport(id: 0x81, type: .feature) == [0x81, 0x02, 0xee, 0xdd, 0xcc, 0xbb, 0xaa])
        let calibration = pad.getReport(id: 0x02, type: .feature)!
        #expect(calibration.count == 37)
        // USB order: pitch+, pitch-, yaw+, yaw-, roll+, roll- at 7-17.
        for plus in stride(from: 7, through: 15, by: 4) {
            #expect(int16(calibration, plus) - int16(calibration, plus + 2) > 10000)
        }
        let version = pad.getReport(id: 0xa3, type: .feature)!
        #expect(version.count == 49 && version[35...36] != [0, 0] && version[41...42] != [0, 0])
        #expect(pad.getReport(id: 0x12, type: .feature)?.prefix(7) == [0x12, 0x02, 0xee, 0xdd, 0xcc, 0xbb, 0xaa])
        #expect(pad.getReport(id: 0x05, type: .feature) == nil)
    }

    @Test func bluetoothCalibrationHasACRCAndGroupedGyroReadings() {
        var pad = DualShock4(transport: .bluetooth)
        let calibration = pad.getReport(id: 0x05, type: .feature)!
        #expect(calibration.count == 41 && calibration[0] == 0x05)
        #expect(PlayStationCRC.isValid(calibration, seed: PlayStationCRC.featureSeed))
        // Bluetooth order: pitch+, yaw+, roll+ at 7-11, then pitch-, yaw-, roll- at 13-17.
        for axis in 0..<3 { #expect(int16(calibration, 7 + 2 * axis) - int16(calibration, 13 + 2 * axis) > 10000) }
        #expect(pad.getReport(id: 0x81, type: .feature) == nil)
    }

    @Test func usbOutputReport() {
        var pad = DualShock4(transport: .usb)
        let captured = bytes("0507000033ff0000400000000000000000000000000000000000000000000000")
        #expect(pad.receive(captured, via: .interrupt).motors == EmulatedMotorOutput(strong: 1, weak: 0.2))
        let lightsOnly = report(32, [0: 0x05, 1: 0x06, 4: 0x33, 5: 0xff, 8: 0x40])
        #expect(pad.receive(lightsOnly, via: .interrupt).motors == nil)
    }

    @Test func bluetoothOutputReportIsCheckedAndDecoded() {
        var pad = DualShock4(transport: .bluetooth)
        let captured = bytes(
            "11c40007000033ff00004000" + String(repeating: "00", count: 62) + "b9531f82")
        #expect(captured.count == 78)
        #expect(pad.receive(captured, via: .interrupt).motors == EmulatedMotorOutput(strong: 1, weak: 0.2))
        var corrupted = captured
        corrupted[7] = 0
        #expect(pad.receive(corrupted, via: .interrupt).motors == nil)
    }

    @Test func neutralInputReports() {
        var bluetooth = DualShock4(transport: .bluetooth)
        let input = bluetooth.nextInputReport()!
        #expect(input.count == 78 && input[0] == 0x11 && input[3] == 0x80 && input[7] == 0x08)
        #expect(PlayStationCRC.isValid(input, seed: PlayStationCRC.inputSeed))
        var usb = DualShock4(transport: .usb)
        let usbInput = usb.nextInputReport()!
        #expect(usbInput.count == 64 && usbInput[0] == 0x01 && usbInput[5] == 0x08)
    }
}
