// The Nintendo Switch Pro Controller (057e:2009) as hid-nintendo binds it, wired over USB or paired over
// Bluetooth: the controller's own report descriptor, answers to everything the driver asks while probing
// (the USB handshake commands, then the subcommands carried in output report 0x01: SPI flash reads for the
// stick and IMU calibration, report mode, vibration, IMU, device info, lights), the stream of 0x30 full
// input reports the driver paces its rumble on, and a decoder for the HD rumble the driver sends.
//
// HD rumble (the format is LinuxInput's SwitchRumbleActuator): hid-nintendo puts an FF_RUMBLE effect's strong
// magnitude on the left actuator and its weak magnitude on the right, each at the same amplitude in both bands
// (low band 160 Hz, high band 320 Hz), so the decoded motors are the left actuator's low band (strong) and the
// right actuator's high band (weak).

package import LinuxInput

/// How the Pro Controller is connected. hid-nintendo binds both and sends the same subcommands; over USB
/// it first runs the controller's USB handshake, over Bluetooth that handshake goes unanswered.
package enum SwitchProTransport: String, Sendable, Hashable, CaseIterable {
    case usb
    case bluetooth
}

extension SwitchRumbleFrame {
    /// The controller's motors: strong is the left actuator's low band (where the driver puts an
    /// effect's strong magnitude), weak the right actuator's high band (its weak magnitude).
    package var motors: EmulatedMotorOutput {
        EmulatedMotorOutput(
            strong: left.lowAmplitude, weak: right.highAmplitude, strongFrequency: left.lowFrequency,
            weakFrequency: right.highFrequency)
    }

    /// The frame hid-nintendo builds for an FF_RUMBLE effect: strong magnitude on the left actuator,
    /// weak on the right, each scaled to `magnitude * 1003 / 65535`, rounded up to the next amplitude
    /// step and sent in both bands at `lowFrequency` and `highFrequency` (each rounded up to the next
    /// table frequency, low clamped to 41...626 Hz and high to 82...1253 Hz).
    package static func driverFrame(
        strongMagnitude: UInt16, weakMagnitude: UInt16, lowFrequency: Int = 160, highFrequency: Int = 320
    ) -> SwitchRumbleFrame {
        SwitchRumbleFrame(
            left: driverActuator(strongMagnitude, lowFrequency: lowFrequency, highFrequency: highFrequency),
            right: driverActuator(weakMagnitude, lowFrequency: lowFrequency, highFrequency: highFrequency))
    }

    private static func driverActuator(
        _ magnitude: UInt16, lowFrequency: Int, highFrequency: Int
    ) -> SwitchRumbleActuator {
        let amplitude = Int(magnitude) * SwitchRumbleActuator.maximumAmplitude / 65535
        let step = SwitchRumbleActuator.amplitudeSteps.firstIndex { $0 >= amplitude } ?? 100
        let low = frequencyCode(min(max(lowFrequency, 41), 626), base: 0x40)
        let high = frequencyCode(min(max(highFrequency, 82), 1253), base: 0x60)
        return SwitchRumbleActuator(
            highFrequencyCode: high, highAmplitudeIndex: UInt8(step), lowFrequencyCode: low,
            lowAmplitudeIndex: UInt8(step))
    }

    /// The smallest code whose table frequency is at least `hertz`.
    private static func frequencyCode(_ hertz: Int, base: Int) -> UInt8 {
        let code = (0..<128).first { SwitchRumbleActuator.frequency(exponent: base + $0) >= Double(hertz) }
        return UInt8(code ?? 127)
    }
}

/// The output reports hid-nintendo sends a Pro Controller.
package enum SwitchProOutputReport: Sendable, Hashable {
    /// 0x01: rumble plus a subcommand and its arguments.
    case rumbleAndSubcommand(packetNumber: UInt8, rumble: SwitchRumbleFrame, subcommand: UInt8, data: [UInt8])
    /// 0x10: rumble only.
    case rumble(packetNumber: UInt8, rumble: SwitchRumbleFrame)
    /// 0x80: a USB command (status, handshake, baud rate, no timeout).
    case usbCommand(UInt8)

    /// Parses a report as the driver writes it (report id first); nil for anything else.
    package init?(bytes: [UInt8]) {
        guard let id = bytes.first else { return nil }
        switch id {
        case 0x01 where bytes.count >= 11:
            self = .rumbleAndSubcommand(
                packetNumber: bytes[1], rumble: SwitchRumbleFrame(bytes: Array(bytes[2..<10])),
                subcommand: bytes[10], data: Array(bytes[11...]))
        case 0x10 where bytes.count >= 10:
            self = .rumble(packetNumber: bytes[1], rumble: SwitchRumbleFrame(bytes: Array(bytes[2..<10])))
        case 0x80 where bytes.count >= 2:
            self = .usbCommand(bytes[1])
        default:
            return nil
        }
    }
}

/// A Nintendo Switch Pro Controller presented over uhid to hid-nintendo; or, with `joyCon`, a Joy-Con, alone over
/// Bluetooth or in the charging grip over USB, which the driver binds by the same protocol and tells apart by its
/// product id and the controller type in its device info.
package struct SwitchProController: HIDControllerModel {
    package var identity: HIDIdentity
    package let transport: SwitchProTransport
    /// The Joy-Con it is; nil for the Pro Controller.
    package let joyCon: HDActuators.JoyConSide?
    /// The controller's Bluetooth address, most significant byte first (device info reply order).
    package let macAddress: [UInt8]

    /// Whether the USB handshake (0x80 0x02) has been answered.
    package private(set) var handshakeDone = false
    /// The input report mode subcommand 0x03 selected (0x30: full reports with IMU), nil before.
    package private(set) var reportMode: UInt8?
    /// Whether subcommand 0x48 enabled the actuators; until then the controller ignores rumble.
    package private(set) var vibrationEnabled = false
    /// Whether subcommand 0x40 enabled the IMU.
    package private(set) var imuEnabled = false
    /// Subcommand 0x30's argument: flashing player lights in the high nibble, lit ones in the low.
    package private(set) var playerLights: UInt8 = 0
    /// Subcommand 0x38's arguments: the Home light's dimming pattern.
    package private(set) var homeLight: [UInt8] = []
    /// The last rumble frame received and the packet number it came with.
    package private(set) var lastRumble: SwitchRumbleFrame?
    package private(set) var lastPacketNumber: UInt8?
    /// Every subcommand received, in order.
    package private(set) var subcommandLog: [UInt8] = []
    /// The input report timer byte, advanced with every input report.
    private var timer: UInt8 = 0

    /// Nintendo's vendor id.
    package static let vendorID: UInt16 = 0x057e
    /// The Pro Controller's product id, the same over USB and Bluetooth.
    package static let productID: UInt16 = 0x2009
    /// The product ids of the left and right Joy-Con, and of the charging grip that holds both over USB.
    package static let joyConLeftProductID: UInt16 = 0x2006
    package static let joyConRightProductID: UInt16 = 0x2007
    package static let chargingGripProductID: UInt16 = 0x200e
    /// A Nintendo-assigned address (98:B6:E9 is one of Nintendo's prefixes).
    package static let defaultMACAddress: [UInt8] = [0x98, 0xb6, 0xe9, 0x4a, 0x21, 0x5c]

    /// - Parameters:
    ///   - transport: USB (the wired controller, default) or Bluetooth.
    ///   - name: the HID name; defaults to the USB manufacturer and product strings, or the Bluetooth name.
    ///   - uniq: defaults to the USB serial number, or the controller's address over Bluetooth.
    ///   - macAddress: the address the controller reports in its device info.
    ///   - joyCon: a Joy-Con rather than the Pro Controller: alone over Bluetooth (057e:2006 or 2007), in the
    ///     charging grip over USB (057e:200e, one device for each Joy-Con the grip holds).
    package init(
        transport: SwitchProTransport = .usb, name: String? = nil, uniq: String? = nil,
        macAddress: [UInt8] = SwitchProController.defaultMACAddress, joyCon: HDActuators.JoyConSide? = nil
    ) {
        self.transport = transport
        self.macAddress = macAddress
        self.joyCon = joyCon
        let bluetooth = transport == .bluetooth
        let product =
            switch (joyCon, bluetooth) {
            case (nil, _): Self.productID
            case (_, false): Self.chargingGripProductID
            case (.left, true): Self.joyConLeftProductID
            case (.right, true): Self.joyConRightProductID
            }
        let productName =
            switch joyCon {
            case nil: "Pro Controller"
            case .left where bluetooth: "Joy-Con (L)"
            case .right where bluetooth: "Joy-Con (R)"
            default: "Charging Grip"
            }
        identity = HIDIdentity(
            bus: bluetooth ? .bluetooth : .usb, vendor: Self.vendorID, product: product,
            version: bluetooth ? 0x0001 : 0x0210,
            name: name ?? (bluetooth ? productName : "Nintendo Co., Ltd. \(productName)"),
            phys: bluetooth ? "00:1a:7d:da:71:13" : "usb-0000:00:14.0-2/input0",
            uniq: uniq ?? (bluetooth ? Self.addressString(macAddress) : "000000000001"),
            reportDescriptor: bluetooth ? Self.bluetoothReportDescriptor : Self.usbReportDescriptor)
    }

    private static func addressString(_ mac: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return mac.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]]) }.joined(separator: ":")
    }

    /// The controller defines no feature reports; a GET_REPORT fails.
    package mutating func getReport(id: UInt8, type: HIDReportType) -> [UInt8]? { nil }

    /// Answers USB commands and subcommands and decodes the rumble of 0x01 and 0x10 reports. A 0x01
    /// report's subcommand runs before its rumble is taken, so the report enabling vibration plays its own.
    package mutating func receive(_ report: [UInt8], via path: HIDOutputPath) -> HIDOutputResponse {
        switch SwitchProOutputReport(bytes: report) {
        case .usbCommand(let command):
            return HIDOutputResponse(replies: usbCommandReply(command).map { [$0] } ?? [])
        case .rumble(let packet, let rumble):
            return HIDOutputResponse(
                motors: takeRumble(rumble, packet: packet), hdRumble: hdRumble(rumble, packet: packet))
        case .rumbleAndSubcommand(let packet, let rumble, let subcommand, let data):
            let reply = subcommandReply(subcommand, data: data)
            return HIDOutputResponse(
                motors: takeRumble(rumble, packet: packet), replies: [reply],
                hdRumble: hdRumble(rumble, packet: packet))
        case nil:
            return .ignored
        }
    }

    /// Records a rumble frame; the motors run it only once vibration is enabled (frequencies still shown).
    private mutating func takeRumble(_ rumble: SwitchRumbleFrame, packet: UInt8) -> EmulatedMotorOutput {
        lastRumble = rumble
        lastPacketNumber = packet
        guard vibrationEnabled else {
            return EmulatedMotorOutput(
                strong: 0, weak: 0, strongFrequency: rumble.motors.strongFrequency,
                weakFrequency: rumble.motors.weakFrequency)
        }
        return rumble.motors
    }

    /// The rumble for the record: both bands of both actuators, played once vibration is enabled (after the
    /// subcommand of the same report ran, as in `takeRumble`).
    private func hdRumble(_ rumble: SwitchRumbleFrame, packet: UInt8) -> SwitchRumblePacket {
        SwitchRumblePacket(counter: packet, played: vibrationEnabled, frame: rumble)
    }

    // MARK: Input reports

    /// Full input reports (0x30, with three IMU samples) every 15 ms, the rate the Pro Controller pushes
    /// them in the standard full mode. hid-nintendo resends queued rumble only when one arrives.
    package var inputReportInterval: Double? { 0.015 }

    /// The next 0x30 report once the driver has selected the full report mode; nothing before.
    package mutating func nextInputReport() -> [UInt8]? {
        guard reportMode == 0x30 || reportMode == 0x31 else { return nil }
        return inputReport(id: 0x30, body: imuSamples)
    }

    /// Input reports' length with the id: the USB interrupt packet (64) or the Bluetooth report (49).
    private var inputReportLength: Int { transport == .usb ? 64 : 49 }

    /// id, timer, battery/connection, buttons, both sticks and the vibrator byte, then `body`, padded.
    private mutating func inputReport(id: UInt8, body: [UInt8]) -> [UInt8] {
        timer &+= 1
        var report = [id, timer, batteryAndConnection, 0x00, 0x00, 0x00]
        report += Self.packStick(Self.leftStick.center) + Self.packStick(Self.rightStick.center)
        report.append(Self.vibratorReport)
        report += body
        return report + [UInt8](repeating: 0, count: max(0, inputReportLength - report.count))
    }

    /// Battery full (level 4 in bits 5...7); on USB also charging (bit 4) and powered by the host (bit 0).
    private var batteryAndConnection: UInt8 { transport == .usb ? 0x91 : 0x8e }

    /// Byte 12, the vibrator report: nonzero, as the controller always sends it. The driver only resends
    /// queued rumble on reports where it is nonzero.
    package static let vibratorReport: UInt8 = 0x70

    /// Three identical IMU samples at rest: 1 g on +Z, gyroscope at its calibrated zero.
    private var imuSamples: [UInt8] {
        let accel: [Int16] = imuEnabled ? [0, 0, 4096] : [0, 0, 0]
        let gyro = imuEnabled ? Self.gyroOffset : [0, 0, 0]
        let sample = (accel + gyro).flatMap(Self.littleEndian)
        return sample + sample + sample
    }

    // MARK: USB commands

    /// The 0x81 reply a USB command gets. Status carries the controller type and address (least significant
    /// byte first); handshake and baud rate echo; "no timeout" and the rest go unanswered, as on the
    /// controller. Over Bluetooth no USB command is answered.
    private mutating func usbCommandReply(_ command: UInt8) -> [UInt8]? {
        guard transport == .usb else { return nil }
        var reply: [UInt8]
        switch command {
        case 0x01: reply = [0x81, 0x01, 0x00, 0x03] + macAddress.reversed()
        case 0x02: reply = [0x81, 0x02]; handshakeDone = true
        case 0x03: reply = [0x81, 0x03]
        default: return nil
        }
        return reply + [UInt8](repeating: 0, count: 64 - reply.count)
    }

    // MARK: Subcommands

    /// Runs a subcommand and builds its 0x21 reply: ACK byte, the subcommand id, then its data.
    private mutating func subcommandReply(_ subcommand: UInt8, data: [UInt8]) -> [UInt8] {
        subcommandLog.append(subcommand)
        let argument = data.first ?? 0
        var ack: UInt8 = 0x80
        var replyData: [UInt8] = []
        switch subcommand {
        case 0x02: (ack, replyData) = (0x82, deviceInfo)
        case 0x03: reportMode = argument
        case 0x10: (ack, replyData) = (0x90, Self.spiReadReply(data))
        case 0x30: playerLights = argument
        case 0x31: (ack, replyData) = (0xb0, [playerLights])
        case 0x38: homeLight = data
        case 0x40: imuEnabled = argument != 0
        case 0x48: vibrationEnabled = argument != 0
        default: break
        }
        return inputReport(id: 0x21, body: [ack, subcommand] + replyData)
    }

    /// Device info: firmware 4.33, the controller type (1 a left Joy-Con, 2 a right one, 3 the Pro Controller),
    /// 0x02, the address (most significant byte first), 0x01, and 0x01 for "use the colours in SPI flash".
    private var deviceInfo: [UInt8] {
        let type: UInt8 =
            switch joyCon {
            case .left: 0x01
            case .right: 0x02
            case nil: 0x03
            }
        return [0x04, 0x21, type, 0x02] + macAddress + [0x01, 0x01]
    }

    /// The reply to an SPI flash read `addr(4, little-endian) size`: the address and size echoed, then the
    /// bytes (at most 29 per read).
    private static func spiReadReply(_ request: [UInt8]) -> [UInt8] {
        let header = Array((request + [0, 0, 0, 0, 0]).prefix(5))
        let address = header[0..<4].reversed().reduce(0) { $0 << 8 | Int($1) }
        return header + SwitchProFlash.read(address: address, count: min(Int(header[4]), 29))
    }

    // MARK: Calibration

    /// Two 12-bit stick values, horizontal and vertical.
    package struct StickPair: Sendable, Hashable {
        package var x: Int
        package var y: Int

        package init(_ x: Int, _ y: Int) {
            self.x = x
            self.y = y
        }
    }

    /// A stick's calibration in 12-bit units: its resting center and its reach above and below it.
    package struct StickCalibration: Sendable, Hashable {
        package var center: StickPair
        package var above: StickPair
        package var below: StickPair
    }

    /// The factory calibration the controller's flash holds (typical of a real Pro Controller).
    package static let leftStick = StickCalibration(
        center: StickPair(2020, 2075), above: StickPair(1490, 1450), below: StickPair(1480, 1420))
    package static let rightStick = StickCalibration(
        center: StickPair(2045, 1990), above: StickPair(1505, 1470), below: StickPair(1460, 1415))
    /// Accelerometer zero offsets and the 1 g scale (16384 at the ±8 g range); gyroscope offsets and scale.
    package static let accelOffset: [Int16] = [-24, 55, 36]
    package static let accelScale: Int16 = 16384
    package static let gyroOffset: [Int16] = [12, -7, 3]
    package static let gyroScale: Int16 = 13371

    /// Two 12-bit values in three bytes, as sticks and stick calibrations are stored.
    package static func packStick(_ value: StickPair) -> [UInt8] {
        [UInt8(value.x & 0xff), UInt8((value.x >> 8) & 0x0f | (value.y & 0x0f) << 4), UInt8((value.y >> 4) & 0xff)]
    }

    static func littleEndian(_ value: Int16) -> [UInt8] {
        let bits = UInt16(bitPattern: value)
        return [UInt8(bits & 0xff), UInt8(bits >> 8)]
    }
}

/// The Pro Controller's SPI flash as far as hid-nintendo reads it: factory calibration present, user
/// calibration absent (its magic bytes erased), everything else erased (0xff).
package enum SwitchProFlash {
    /// Factory IMU calibration: accelerometer offsets and scales, gyroscope offsets and scales (3 x s16
    /// each, little-endian).
    package static let imuCalibrationAddress = 0x6020
    /// Factory left stick calibration: above, center, below (9 bytes).
    package static let leftStickCalibrationAddress = 0x603d
    /// Factory right stick calibration: center, below, above (9 bytes).
    package static let rightStickCalibrationAddress = 0x6046
    /// Body and button colours (3 bytes each).
    package static let colorsAddress = 0x6050
    /// Where a user calibration would start with the magic B2 A1: left stick, right stick, IMU.
    package static let userCalibrationMagicAddresses = [0x8010, 0x801b, 0x8026]

    /// `count` bytes from `address`.
    package static func read(address: Int, count: Int) -> [UInt8] {
        (0..<max(0, count)).map { contents[address + $0] ?? 0xff }
    }

    /// The programmed bytes by address.
    private static let contents: [Int: UInt8] = {
        typealias Pro = SwitchProController
        let imu =
            (Pro.accelOffset + [Pro.accelScale, Pro.accelScale, Pro.accelScale] + Pro.gyroOffset
            + [Pro.gyroScale, Pro.gyroScale, Pro.gyroScale]).flatMap(Pro.littleEndian)
        let left = [Pro.leftStick.above, Pro.leftStick.center, Pro.leftStick.below].flatMap(Pro.packStick)
        let right = [Pro.rightStick.center, Pro.rightStick.below, Pro.rightStick.above].flatMap(Pro.packStick)
        let colors: [UInt8] = [0x32, 0x32, 0x32, 0xff, 0xff, 0xff]
        var bytes: [Int: UInt8] = [:]
        for (start, block) in [
            (imuCalibrationAddress, imu), (leftStickCalibrationAddress, left),
            (rightStickCalibrationAddress, right), (colorsAddress, colors),
        ] {
            for (offset, byte) in block.enumerated() { bytes[start + offset] = byte }
        }
        return bytes
    }()
}

extension SwitchProController {
    /// The wired controller's report descriptor (203 bytes): input 0x30 as a 63-byte joystick report
    /// (buttons, four 16-bit axes, hat), vendor input reports 0x21 and 0x81 and vendor output reports
    /// 0x01, 0x10, 0x80 and 0x82, each 63 bytes after the id.
    package static let usbReportDescriptor: [UInt8] = [
        0x05, 0x01, 0x15, 0x00, 0x09, 0x04, 0xa1, 0x01,  // Generic Desktop, min 0, Joystick, Application
        0x85, 0x30, 0x05, 0x01, 0x05, 0x09, 0x19, 0x01, 0x29, 0x0a,  // id 0x30: Buttons 1...10
        0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0a, 0x55, 0x00, 0x65, 0x00, 0x81, 0x02,
        0x05, 0x09, 0x19, 0x0b, 0x29, 0x0e,  // Buttons 11...14
        0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x04, 0x81, 0x02,
        0x75, 0x01, 0x95, 0x02, 0x81, 0x03,  // 2 bits padding
        0x0b, 0x01, 0x00, 0x01, 0x00, 0xa1, 0x00,  // Pointer, Physical
        0x0b, 0x30, 0x00, 0x01, 0x00, 0x0b, 0x31, 0x00, 0x01, 0x00,  // X, Y
        0x0b, 0x32, 0x00, 0x01, 0x00, 0x0b, 0x35, 0x00, 0x01, 0x00,  // Z, Rz
        0x15, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00, 0x75, 0x10, 0x95, 0x04, 0x81, 0x02, 0xc0,  // 4 x 16 bits
        0x0b, 0x39, 0x00, 0x01, 0x00, 0x15, 0x00, 0x25, 0x07,  // Hat switch 0...7
        0x35, 0x00, 0x46, 0x3b, 0x01, 0x65, 0x14, 0x75, 0x04, 0x95, 0x01, 0x81, 0x02,  // 0...315 degrees
        0x05, 0x09, 0x19, 0x0f, 0x29, 0x12,  // Buttons 15...18
        0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x04, 0x81, 0x02,
        0x75, 0x08, 0x95, 0x34, 0x81, 0x03,  // 52 bytes padding
        0x06, 0x00, 0xff,  // Vendor page 0xff00
        0x85, 0x21, 0x09, 0x01, 0x75, 0x08, 0x95, 0x3f, 0x81, 0x03,  // input 0x21
        0x85, 0x81, 0x09, 0x02, 0x75, 0x08, 0x95, 0x3f, 0x81, 0x03,  // input 0x81
        0x85, 0x01, 0x09, 0x03, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83,  // output 0x01
        0x85, 0x10, 0x09, 0x04, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83,  // output 0x10
        0x85, 0x80, 0x09, 0x05, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83,  // output 0x80
        0x85, 0x82, 0x09, 0x06, 0x75, 0x08, 0x95, 0x3f, 0x91, 0x83,  // output 0x82
        0xc0,
    ]

    /// The Bluetooth report descriptor (170 bytes): vendor inputs 0x21 and 0x30 (48 bytes), 0x31...0x33
    /// (361 bytes), the simple gamepad report 0x3f (16 buttons, hat, four 16-bit axes) and vendor outputs
    /// 0x01, 0x10, 0x11, 0x12 (48 bytes).
    package static let bluetoothReportDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x06, 0x01, 0xff,  // Generic Desktop, Game Pad; vendor 0xff01
        0x85, 0x21, 0x09, 0x21, 0x75, 0x08, 0x95, 0x30, 0x81, 0x02,  // input 0x21, 48 bytes
        0x85, 0x30, 0x09, 0x30, 0x75, 0x08, 0x95, 0x30, 0x81, 0x02,  // input 0x30, 48 bytes
        0x85, 0x31, 0x09, 0x31, 0x75, 0x08, 0x96, 0x69, 0x01, 0x81, 0x02,  // input 0x31, 361 bytes
        0x85, 0x32, 0x09, 0x32, 0x75, 0x08, 0x96, 0x69, 0x01, 0x81, 0x02,  // input 0x32
        0x85, 0x33, 0x09, 0x33, 0x75, 0x08, 0x96, 0x69, 0x01, 0x81, 0x02,  // input 0x33
        0x85, 0x3f, 0x05, 0x09, 0x19, 0x01, 0x29, 0x10,  // input 0x3f: Buttons 1...16
        0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x10, 0x81, 0x02,
        0x05, 0x01, 0x09, 0x39, 0x15, 0x00, 0x25, 0x07, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42,  // Hat
        0x05, 0x09, 0x75, 0x04, 0x95, 0x01, 0x81, 0x01,  // 4 bits padding
        0x05, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x33, 0x09, 0x34,  // X, Y, Rx, Ry
        0x16, 0x00, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00, 0x75, 0x10, 0x95, 0x04, 0x81, 0x02,
        0x06, 0x01, 0xff,  // vendor 0xff01
        0x85, 0x01, 0x09, 0x01, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02,  // output 0x01
        0x85, 0x10, 0x09, 0x10, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02,  // output 0x10
        0x85, 0x11, 0x09, 0x11, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02,  // output 0x11
        0x85, 0x12, 0x09, 0x12, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02,  // output 0x12
        0xc0,
    ]
}
