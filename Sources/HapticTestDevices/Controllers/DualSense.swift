// Sony DualSense (PS5) controller over USB or Bluetooth, as bound by hid-playstation. The driver reads the
// pairing (MAC), firmware and calibration feature reports while probing; over Bluetooth every such reply and
// every report in either direction ends in a CRC32 the receiver checks. Also holds what the DualShock 4 model
// shares with it: the transport and the MAC address handling (the CRC is LinuxInput's `PlayStationCRC`).

import LinuxInput

/// How a PlayStation controller is connected: the report layouts, and whether reports carry a CRC, follow it.
package enum PlayStationTransport: Sendable, Hashable {
    case usb
    case bluetooth

    /// The HID bus the kernel is told.
    package var bus: HIDBus { self == .usb ? .usb : .bluetooth }
}

/// Bluetooth addresses as the kernel's `uniq` strings ("aa:bb:cc:dd:ee:ff") and as PlayStation controllers
/// store them in feature reports (least significant byte first, the reverse of the string).
package enum PlayStationMAC {
    /// The six bytes of a colon-separated address, most significant first; nil unless it is exactly that.
    package static func parse(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard text.utf8.count == 17, parts.count == 6 else { return nil }
        let bytes = parts.compactMap { UInt8($0, radix: 16) }
        return bytes.count == 6 ? bytes : nil
    }

    /// The colon-separated lower-case text of an address given most significant byte first.
    package static func format(_ address: [UInt8]) -> String {
        address.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    /// The bytes as a controller's feature report carries them.
    package static func reportOrder(_ address: [UInt8]) -> [UInt8] { address.reversed() }
}

/// Little-endian byte helpers for building feature reports.
enum PlayStationBytes {
    static func int16LE(_ values: [Int16]) -> [UInt8] {
        values.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }

    static func put(_ value: UInt32, bytes count: Int, into report: inout [UInt8], at offset: Int) {
        for index in 0..<count { report[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
    }

    static func put(_ text: String, into report: inout [UInt8], at offset: Int) {
        for (index, byte) in text.utf8.enumerated() { report[offset + index] = byte }
    }
}

/// A Sony DualSense. The firmware's update version decides how hid-playstation asks for rumble: before 2.21
/// (`0x0215`) it sets the compatible-vibration bit in the first valid flag (`mode == "compatible"`), from
/// then on the vibration-v2 bit in the third (`mode == "v2"`); either way the motor bytes are 0...255.
package struct DualSense: HIDControllerModel {
    /// Feature and output report ids and sizes (with the id; Bluetooth sizes include the CRC).
    package enum Report {
        package static let calibration: UInt8 = 0x05
        package static let pairingInfo: UInt8 = 0x09
        package static let firmwareInfo: UInt8 = 0x20
        package static let calibrationSize = 41
        package static let pairingInfoSize = 20
        package static let firmwareInfoSize = 64
        package static let usbOutput: UInt8 = 0x02
        package static let usbOutputSize = 63
        package static let bluetoothOutput: UInt8 = 0x31
        package static let bluetoothOutputSize = 78
        package static let usbInput: UInt8 = 0x01
        package static let usbInputSize = 64
        package static let bluetoothInput: UInt8 = 0x31
        package static let bluetoothInputSize = 78
    }

    /// Firmware update versions (feature report 0x20, bytes 44-45).
    package enum FirmwareUpdateVersion {
        /// A launch-era controller: hid-playstation drives it with compatible vibration.
        package static let original: UInt16 = 0x0204
        /// An updated controller: hid-playstation drives it with vibration v2.
        package static let vibrationV2: UInt16 = 0x0224
        /// The first version hid-playstation drives with vibration v2 (2.21).
        package static let firstVibrationV2: UInt16 = 0x0215
    }

    package var identity: HIDIdentity
    package let transport: PlayStationTransport
    /// Reported in feature report 0x20; selects the vibration mode the driver uses.
    package let firmwareUpdateVersion: UInt16
    /// Seconds between streamed neutral input reports, or nil to send none.
    package let inputReportInterval: Double?
    /// The address reported when `identity.uniq` holds none (a USB pad has an empty `uniq`).
    private let defaultMAC: [UInt8]
    private var inputSequence: UInt8 = 0

    /// A DualSense on `transport`. `uniq` (a Bluetooth address) becomes the MAC the driver reports. Over USB the
    /// identity's `uniq` stays empty unless one is given, as a real pad has no serial number; the driver learns
    /// the MAC from the pairing report either way.
    package init(
        transport: PlayStationTransport = .usb, firmwareUpdateVersion: UInt16 = FirmwareUpdateVersion.vibrationV2,
        name: String? = nil, uniq: String? = nil, inputReportInterval: Double? = nil
    ) {
        let address = uniq.flatMap(PlayStationMAC.parse) ?? [0xa0, 0xab, 0x51, 0x5e, 0xd4, 0x10]
        self.transport = transport
        self.firmwareUpdateVersion = firmwareUpdateVersion
        self.inputReportInterval = inputReportInterval
        defaultMAC = address
        identity = HIDIdentity(
            bus: transport.bus, vendor: 0x054c, product: 0x0ce6, version: 0x0100,
            name: name
                ?? (transport == .usb
                    ? "Sony Interactive Entertainment DualSense Wireless Controller" : "DualSense Wireless Controller"),
            phys: transport == .usb ? "usb-0000:00:14.0-2/input3" : "00:1a:7d:da:71:10",
            uniq: uniq ?? (transport == .usb ? "" : PlayStationMAC.format(address)),
            reportDescriptor: transport == .usb ? Self.usbReportDescriptor : Self.bluetoothReportDescriptor)
    }

    /// The controller's Bluetooth address, most significant byte first.
    package var macAddress: [UInt8] { PlayStationMAC.parse(identity.uniq) ?? defaultMAC }

    /// The vibration mode hid-playstation picks for this firmware.
    package var expectedVibrationMode: String {
        firmwareUpdateVersion >= FirmwareUpdateVersion.firstVibrationV2 ? "v2" : "compatible"
    }

    package mutating func getReport(id: UInt8, type: HIDReportType) -> [UInt8]? {
        guard type == .feature else { return nil }
        var report: [UInt8]
        switch id {
        case Report.calibration: report = calibrationReport()
        case Report.pairingInfo: report = pairingReport()
        case Report.firmwareInfo: report = firmwareReport()
        default: return nil
        }
        if transport == .bluetooth { PlayStationCRC.sign(&report, seed: PlayStationCRC.featureSeed) }
        return report
    }

    /// Over Bluetooth a haptics report 0x32 feeds the voice coils and leaves the rumble motors as they are.
    package mutating func receive(_ report: [UInt8], via path: HIDOutputPath) -> HIDOutputResponse {
        if transport == .bluetooth, let waveform = WaveformPacket.dualSense(report) {
            return HIDOutputResponse(waveform: waveform)
        }
        guard let common = commonOutputSection(of: report) else { return .ignored }
        return HIDOutputResponse(motors: Self.decodeMotors(common))
    }

    package mutating func nextInputReport() -> [UInt8]? {
        inputSequence &+= 1
        return neutralInputReport(sequence: inputSequence)
    }
}

extension DualSense {
    /// Bits of the output report's valid flags (first, and third at common offset 38).
    package enum OutputFlag {
        package static let compatibleVibration: UInt8 = 0x01
        package static let hapticsSelect: UInt8 = 0x02
        package static let vibrationV2: UInt8 = 0x04
    }

    /// The mode an output report with no valid flag leaves the pad in: rumble emulation off.
    package static let rumbleOffMode = "off"

    /// The part of the main output report that USB and Bluetooth share (47 bytes): valid flags at 0, 1 and 38,
    /// the weak (right) motor at 2, the strong (left) one at 3, lights after. Nil for a report the controller
    /// would drop: another id, too short, over Bluetooth with a bad CRC or neither header below.
    ///
    /// Over Bluetooth the controller takes two headers, both sent to real pads by working drivers: the kernel's
    /// (sequence number in the high nibble of byte 1, its low nibble 0, the tag 0x10 in byte 2, the section from
    /// byte 3) and SDL's, DS4Windows' and pydualsense's (low nibble 2 in byte 1, the section from byte 2).
    func commonOutputSection(of report: [UInt8]) -> ArraySlice<UInt8>? {
        switch transport {
        case .usb:
            guard report.count >= Report.usbOutputSize, report[0] == Report.usbOutput else { return nil }
            return report[1..<48]
        case .bluetooth:
            guard report.count == Report.bluetoothOutputSize, report[0] == Report.bluetoothOutput,
                PlayStationCRC.isValid(report, seed: PlayStationCRC.outputSeed)
            else { return nil }
            switch report[1] & 0x0f {
            case 0 where report[2] == 0x10: return report[3..<50]
            case 2: return report[2..<49]
            default: return nil
            }
        }
    }

    /// The motor levels a common section sets, or nil when neither vibration bit says the motor bytes count
    /// (lightbar, player LED and mute LED reports: the kernel sends those while the motors run and expects them
    /// to go on). A section with no valid flag at all turns rumble emulation off (the pad goes back to audio
    /// haptics, which over Bluetooth are silent): that is how SDL stops the motors.
    static func decodeMotors(_ common: ArraySlice<UInt8>) -> EmulatedMotorOutput? {
        let base = common.startIndex
        let compatible = common[base] & OutputFlag.compatibleVibration != 0
        let v2 = common[base + 38] & OutputFlag.vibrationV2 != 0
        if common[base] == 0, common[base + 1] == 0, common[base + 38] == 0 {
            return EmulatedMotorOutput(strong: 0, weak: 0, mode: rumbleOffMode)
        }
        guard compatible || v2 else { return nil }
        return EmulatedMotorOutput(
            strong: Double(common[base + 3]) / 255, weak: Double(common[base + 2]) / 255,
            mode: compatible ? "compatible" : "v2")
    }

    /// Feature report 0x05: gyroscope biases and ±range readings, gyroscope speeds, accelerometer ±1 g readings.
    func calibrationReport() -> [UInt8] {
        let values: [Int16] = [
            2, -3, 1,  // gyro pitch, yaw, roll bias
            8870, -8860, 8850, -8875, 8890, -8880,  // gyro pitch+, pitch-, yaw+, yaw-, roll+, roll-
            540, 540,  // gyro speed+, speed- (deg/s of the ± readings)
            8190, -8210, 8230, -8170, 8160, -8220,  // accel x+, x-, y+, y-, z+, z-
        ]
        return padded([Report.calibration] + PlayStationBytes.int16LE(values), to: Report.calibrationSize)
    }

    /// Feature report 0x09: the controller's address at 1-6, least significant byte first.
    func pairingReport() -> [UInt8] {
        padded([Report.pairingInfo] + PlayStationMAC.reportOrder(macAddress), to: Report.pairingInfoSize)
    }

    /// Feature report 0x20: build date and time, hardware version (24), firmware version (28) and the update
    /// version (44) that selects the vibration mode.
    func firmwareReport() -> [UInt8] {
        let v2 = firmwareUpdateVersion >= FirmwareUpdateVersion.firstVibrationV2
        var report = [UInt8](repeating: 0, count: Report.firmwareInfoSize)
        report[0] = Report.firmwareInfo
        PlayStationBytes.put(v2 ? "Jun 13 2023" : "Sep 21 2020", into: &report, at: 1)
        PlayStationBytes.put(v2 ? "11:25:07" : "05:44:31", into: &report, at: 12)
        PlayStationBytes.put(0x0004_0003, bytes: 4, into: &report, at: 20)
        PlayStationBytes.put(0x0000_0313, bytes: 4, into: &report, at: 24)
        PlayStationBytes.put(v2 ? 0x0100_0228 : 0x0100_0021, bytes: 4, into: &report, at: 28)
        PlayStationBytes.put(UInt32(firmwareUpdateVersion), bytes: 2, into: &report, at: 44)
        return report
    }

    /// A report of the pad at rest: sticks centred, nothing pressed, no touch, 1 g on the accelerometer's Y.
    func neutralInputReport(sequence: UInt8) -> [UInt8] {
        var state = [UInt8](repeating: 0, count: 63)
        state[0...3] = [0x80, 0x80, 0x80, 0x80]
        state[6] = sequence
        state[7] = 0x08  // hat centred
        state[24] = 0x20  // accel Y = 8192
        state[32] = 0x80  // touch point 0 inactive
        state[36] = 0x80  // touch point 1 inactive
        state[52] = transport == .usb ? 0x1a : 0x08  // USB: charging 100 %, Bluetooth: discharging 85 %
        switch transport {
        case .usb:
            return [Report.usbInput] + state
        case .bluetooth:
            var report = [Report.bluetoothInput, sequence << 4] + state
            report += [UInt8](repeating: 0, count: Report.bluetoothInputSize - report.count)
            PlayStationCRC.sign(&report, seed: PlayStationCRC.inputSeed)
            return report
        }
    }

    private func padded(_ bytes: [UInt8], to count: Int) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: max(0, count - bytes.count))
    }
}

extension DualSense {
    /// The USB report descriptor (257 bytes): input 0x01 (64 bytes), output 0x02 (63), feature reports 0x05,
    /// 0x08, 0x09, 0x0a, 0x20-0x22, 0x80-0x85, 0xa0, 0xe0, 0xf0-0xf2.
    package static let usbReportDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x32, 0x09, 0x35,
        0x09, 0x33, 0x09, 0x34, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x06, 0x81, 0x02, 0x06,
        0x00, 0xff, 0x09, 0x20, 0x95, 0x01, 0x81, 0x02, 0x05, 0x01, 0x09, 0x39, 0x15, 0x00, 0x25, 0x07,
        0x35, 0x00, 0x46, 0x3b, 0x01, 0x65, 0x14, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x65, 0x00, 0x05,
        0x09, 0x19, 0x01, 0x29, 0x0f, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0f, 0x81, 0x02, 0x06,
        0x00, 0xff, 0x09, 0x21, 0x95, 0x0d, 0x81, 0x02, 0x06, 0x00, 0xff, 0x09, 0x22, 0x15, 0x00, 0x26,
        0xff, 0x00, 0x75, 0x08, 0x95, 0x34, 0x81, 0x02, 0x85, 0x02, 0x09, 0x23, 0x95, 0x2f, 0x91, 0x02,
        0x85, 0x05, 0x09, 0x23, 0x95, 0x28, 0xb1, 0x02, 0x85, 0x08, 0x09, 0x24, 0x95, 0x2f, 0xb1, 0x02,
        0x85, 0x09, 0x09, 0x24, 0x95, 0x13, 0xb1, 0x02, 0x85, 0x0a, 0x09, 0x25, 0x95, 0x1a, 0xb1, 0x02,
        0x85, 0x20, 0x09, 0x26, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x21, 0x09, 0x27, 0x95, 0x04, 0xb1, 0x02,
        0x85, 0x22, 0x09, 0x40, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x80, 0x09, 0x28, 0x95, 0x3f, 0xb1, 0x02,
        0x85, 0x81, 0x09, 0x29, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x82, 0x09, 0x2a, 0x95, 0x09, 0xb1, 0x02,
        0x85, 0x83, 0x09, 0x2b, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x84, 0x09, 0x2c, 0x95, 0x3f, 0xb1, 0x02,
        0x85, 0x85, 0x09, 0x2d, 0x95, 0x02, 0xb1, 0x02, 0x85, 0xa0, 0x09, 0x2e, 0x95, 0x01, 0xb1, 0x02,
        0x85, 0xe0, 0x09, 0x2f, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf0, 0x09, 0x30, 0x95, 0x3f, 0xb1, 0x02,
        0x85, 0xf1, 0x09, 0x31, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf2, 0x09, 0x32, 0x95, 0x0f, 0xb1, 0x02,
        0xc0,
    ]

    /// The Bluetooth report descriptor (279 bytes): a short input 0x01, input/output 0x31 (78 bytes) and the
    /// longer 0x32-0x39, feature reports 0x05, 0x08, 0x09, 0x20, 0x22, 0x80-0x83, 0xf0-0xf2.
    package static let bluetoothReportDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x32, 0x09, 0x35,
        0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x04, 0x81, 0x02, 0x09, 0x39, 0x15, 0x00, 0x25,
        0x07, 0x35, 0x00, 0x46, 0x3b, 0x01, 0x65, 0x14, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x65, 0x00,
        0x05, 0x09, 0x19, 0x01, 0x29, 0x0e, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0e, 0x81, 0x02,
        0x75, 0x06, 0x95, 0x01, 0x81, 0x01, 0x05, 0x01, 0x09, 0x33, 0x09, 0x34, 0x15, 0x00, 0x26, 0xff,
        0x00, 0x75, 0x08, 0x95, 0x02, 0x81, 0x02, 0x06, 0x00, 0xff, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75,
        0x08, 0x95, 0x4d, 0x85, 0x31, 0x09, 0x31, 0x91, 0x02, 0x09, 0x3b, 0x81, 0x02, 0x85, 0x32, 0x09,
        0x32, 0x95, 0x8d, 0x91, 0x02, 0x85, 0x33, 0x09, 0x33, 0x95, 0xcd, 0x91, 0x02, 0x85, 0x34, 0x09,
        0x34, 0x96, 0x0d, 0x01, 0x91, 0x02, 0x85, 0x35, 0x09, 0x35, 0x96, 0x4d, 0x01, 0x91, 0x02, 0x85,
        0x36, 0x09, 0x36, 0x96, 0x8d, 0x01, 0x91, 0x02, 0x85, 0x37, 0x09, 0x37, 0x96, 0xcd, 0x01, 0x91,
        0x02, 0x85, 0x38, 0x09, 0x38, 0x96, 0x0d, 0x02, 0x91, 0x02, 0x85, 0x39, 0x09, 0x39, 0x96, 0x22,
        0x02, 0x91, 0x02, 0x06, 0x80, 0xff, 0x85, 0x05, 0x09, 0x33, 0x95, 0x28, 0xb1, 0x02, 0x85, 0x08,
        0x09, 0x34, 0x95, 0x2f, 0xb1, 0x02, 0x85, 0x09, 0x09, 0x24, 0x95, 0x13, 0xb1, 0x02, 0x85, 0x20,
        0x09, 0x26, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x22, 0x09, 0x40, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x80,
        0x09, 0x28, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x81, 0x09, 0x29, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0x82,
        0x09, 0x2a, 0x95, 0x09, 0xb1, 0x02, 0x85, 0x83, 0x09, 0x2b, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf1,
        0x09, 0x31, 0x95, 0x3f, 0xb1, 0x02, 0x85, 0xf2, 0x09, 0x32, 0x95, 0x0f, 0xb1, 0x02, 0x85, 0xf0,
        0x09, 0x30, 0x95, 0x3f, 0xb1, 0x02, 0xc0,
    ]
}
