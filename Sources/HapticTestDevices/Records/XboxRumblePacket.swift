// The rumble command of an Xbox Wireless Controller's output report 3, as the emulated controller decoded it: the
// enable mask, all four motors' magnitudes (the body's strong and weak motors and the two trigger motors) and the
// report's own timing. Part of the record (`PadRecord.xboxRumble`); `XboxRumblePlayback` plays it.
internal import LinuxInput

/// One report 3, decoded. Magnitudes are 0...1 of 100 (the report's 0...100 scale; the controller caps larger
/// values at 100); the timing fields are the bytes as sent.
public struct XboxRumblePacket: Equatable, Hashable, Sendable, Codable {
    /// Bit 0: weak (right body) motor, bit 1: strong (left body) motor, bit 2: right trigger, bit 3: left trigger.
    public var enable: Int
    public var leftTrigger: Double
    public var rightTrigger: Double
    public var strong: Double
    public var weak: Double
    /// How long one play lasts, in 10 ms units.
    public var duration: Int
    /// The wait before the motors start, in 10 ms units.
    public var startDelay: Int
    /// Further plays after the first.
    public var loopCount: Int

    public init(
        enable: Int, leftTrigger: Double, rightTrigger: Double, strong: Double, weak: Double, duration: Int,
        startDelay: Int, loopCount: Int
    ) {
        self.enable = enable
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
        self.strong = strong
        self.weak = weak
        self.duration = duration
        self.startDelay = startDelay
        self.loopCount = loopCount
    }

    init(_ report: XboxRumbleReport) {
        let level = { (magnitude: UInt8) in Double(min(magnitude, 100)) / 100 }
        self.init(
            enable: Int(report.enable), leftTrigger: level(report.leftTrigger),
            rightTrigger: level(report.rightTrigger), strong: level(report.strong), weak: level(report.weak),
            duration: Int(report.duration), startDelay: Int(report.startDelay), loopCount: Int(report.loopCount))
    }

    /// Whether the report enables `motor` (its bit in `enable`).
    public func enables(_ motor: XboxMotor) -> Bool { enable & motor.enableBit != 0 }

    /// The magnitude the report gives `motor`, enabled or not.
    public func magnitude(_ motor: XboxMotor) -> Double {
        switch motor {
        case .leftTrigger: leftTrigger
        case .rightTrigger: rightTrigger
        case .strong: strong
        case .weak: weak
        }
    }
}

/// The Xbox Wireless Controller's four motors.
public enum XboxMotor: String, Sendable, Hashable, CaseIterable, Codable {
    case leftTrigger
    case rightTrigger
    case strong
    case weak

    /// The motor's bit in report 3's enable mask.
    public var enableBit: Int {
        switch self {
        case .weak: 0x01
        case .strong: 0x02
        case .rightTrigger: 0x04
        case .leftTrigger: 0x08
        }
    }
}
