// What a test device saw, one record per kernel request, event or report, and its JSON-lines form: the
// virtual pad's uinput requests and events, and the output reports an emulated controller's driver sent.
// The schema is documented in docs/virtual-pad.md; keys are camelCase mirrors of linux/input.h fields.
public import LinuxInput
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A kernel timestamp: microseconds on `CLOCK_MONOTONIC`, the clock uinput stamps its events with
/// (`uinput_dev_event` calls `ktime_get_ts64`), at the resolution `struct input_event` carries.
public struct PadTimestamp: Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// Seconds as a number, the form the JSON record uses.
    public var seconds: Double { Double(microseconds) / Self.perSecond }

    public init(seconds: Double) { self.microseconds = Int64((seconds * Self.perSecond).rounded()) }

    private static let perSecond = 1_000_000.0

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.microseconds < rhs.microseconds }

    /// The latest time a record file may hold: longer than any uptime (31,000 years), and far inside the
    /// microseconds an `Int64` holds, so that reading a hostile file cannot trap on the conversion.
    static let latestSeconds = 1e12

    public var description: String {
        let sign = microseconds < 0 ? "-" : ""
        let whole = microseconds.magnitude / 1_000_000
        let fraction = String(microseconds.magnitude % 1_000_000)
        return "\(sign)\(whole).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    /// Reads the seconds of a record file: a `CLOCK_MONOTONIC` time, so not negative, and at most
    /// `latestSeconds`; anything else is a corrupt record.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let seconds = try container.decode(Double.self)
        guard seconds >= 0, seconds <= Self.latestSeconds else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(seconds) s is not a CLOCK_MONOTONIC time (0...1e12 s)")
        }
        self.init(seconds: seconds)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(seconds)
    }
}

/// An input report an emulated controller streamed by itself (a Switch Pro Controller's 0x30 every 15 ms): when
/// it was due on the stream's schedule and when it was written to the kernel. A report written late moves the
/// frames a driver paces on the reports (hid-nintendo's) with it.
package struct StreamedInputReport: Hashable, Sendable {
    package var due: PadTimestamp
    package var sent: PadTimestamp

    package init(due: PadTimestamp, sent: PadTimestamp) {
        self.due = due
        self.sent = sent
    }
}

/// One thing the pad was asked to do.
public struct PadRecord: Equatable, Hashable, Sendable, Codable {
    public enum Event: String, Sendable, Codable, CaseIterable {
        /// `EVIOCSFF` reached the pad (`UI_FF_UPLOAD`).
        case upload
        /// `EVIOCRMFF` (or the client closing its descriptor) reached the pad (`UI_FF_ERASE`).
        case erase
        /// `EV_FF` with an effect id and a value > 0 (the value is a repeat count).
        case play
        /// `EV_FF` with an effect id and value 0.
        case stop
        /// `EV_FF`/`FF_GAIN`, value 0...0xffff.
        case gain
        /// `EV_FF`/`FF_AUTOCENTER`, value 0...0xffff.
        case autocenter
        /// An emulated controller received a report or packet from its driver (`report`), and its motors run
        /// at `strong` and `weak` after it.
        case output
    }

    public var event: Event
    /// When the kernel queued the request or event for the pad.
    public var time: PadTimestamp
    /// The effect slot (upload, erase, play, stop).
    public var id: Int16?
    /// Upload: the effect as the kernel handed it over (its `id` is the slot the kernel chose).
    public var effect: ForceFeedbackEffect?
    /// Upload: true when the upload replaced an effect already in the slot (`EVIOCSFF` with an id).
    public var replacing: Bool?
    /// Upload and erase: what the pad answered, 0 or a negative errno (-28 is `ENOSPC`).
    public var retval: Int32?
    /// Play: the repeat count (the event's value).
    public var count: Int32?
    /// Gain and autocenter: the value, 0...0xffff.
    public var value: UInt16?
    /// Output: the bytes received, in hexadecimal (report id first where the device numbers its reports).
    public var report: String?
    /// Output: what the strong (low-frequency) motor runs at after the report, 0...1 of full drive.
    public var strong: Double?
    /// Output: the same for the weak (high-frequency) motor.
    public var weak: Double?
    /// Output, HD rumble (Switch Pro Controller): the frequency each actuator is driven at, in Hz.
    public var strongFrequency: Double?
    public var weakFrequency: Double?
    /// Output, DualSense: the vibration mode the report selects (`compatible` or `v2`), or `off` for a report
    /// with no valid flag at all (rumble emulation off).
    public var mode: String?
    /// Output, DualSense over Bluetooth: the haptics report 0x32 decoded (the voice coils' samples).
    public var waveform: WaveformPacket?
    /// Output, Switch Pro Controller (reports 0x10 and 0x01): the HD rumble decoded, both bands of both actuators.
    public var hdRumble: SwitchRumblePacket?
    /// Output, Xbox Wireless Controller (report 3): all four motors' magnitudes, the enable mask and the timing.
    public var xboxRumble: XboxRumblePacket?
    /// Output, PID joystick: the USB HID PID report decoded (what hid-pidff asked of the device; docs/emulation.md).
    public var pid: PIDReport?

    public init(
        event: Event, time: PadTimestamp, id: Int16? = nil, effect: ForceFeedbackEffect? = nil,
        replacing: Bool? = nil, retval: Int32? = nil, count: Int32? = nil, value: UInt16? = nil
    ) {
        self.event = event
        self.time = time
        self.id = id
        self.effect = effect
        self.replacing = replacing
        self.retval = retval
        self.count = count
        self.value = value
    }

    /// An output record: `report` as the device received it, the motor levels it leaves, and what the report
    /// carries beyond two levels (a waveform, HD rumble, trigger motors).
    public init(
        outputAt time: PadTimestamp, report: [UInt8], strong: Double, weak: Double,
        strongFrequency: Double? = nil, weakFrequency: Double? = nil, mode: String? = nil,
        waveform: WaveformPacket? = nil, hdRumble: SwitchRumblePacket? = nil, xboxRumble: XboxRumblePacket? = nil,
        pid: PIDReport? = nil
    ) {
        self.init(event: .output, time: time)
        self.report = Self.hex(report)
        self.strong = strong
        self.weak = weak
        self.strongFrequency = strongFrequency
        self.weakFrequency = weakFrequency
        self.mode = mode
        self.waveform = waveform
        self.hdRumble = hdRumble
        self.xboxRumble = xboxRumble
        self.pid = pid
    }

    /// Lower-case hexadecimal, two digits per byte, no separators.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// One JSON object without a newline; keys sorted so records diff cleanly.
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every field is a plain number, string, bool or nested object of those: encoding cannot fail.
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses one line written by `jsonLine()`.
    public init(jsonLine: String) throws {
        self = try JSONDecoder().decode(PadRecord.self, from: Data(jsonLine.utf8))
    }

    /// Parses a whole record file: one object per non-empty line.
    public static func decodeLines(_ text: String) throws -> [PadRecord] {
        try text.split(separator: "\n").filter { !$0.isEmpty }.map { try PadRecord(jsonLine: String($0)) }
    }
}

// MARK: - The effect's JSON shape

extension ForceFeedbackEffect: Codable {
    private enum Keys: String, CodingKey {
        case type, id, direction, trigger, replay, rumble, periodic, constant, ramp, condition
    }

    private struct Trigger: Codable { var button: UInt16; var interval: UInt16 }
    private struct Replay: Codable { var length: UInt16; var delay: UInt16 }
    private struct Rumble: Codable { var strongMagnitude: UInt16; var weakMagnitude: UInt16 }
    private struct Periodic: Codable {
        var waveform: String
        var period: UInt16
        var magnitude: Int16
        var offset: Int16
        var phase: UInt16
        var envelope: ForceFeedbackEnvelope
    }
    private struct Constant: Codable { var level: Int16; var envelope: ForceFeedbackEnvelope }
    private struct Ramp: Codable { var startLevel: Int16; var endLevel: Int16; var envelope: ForceFeedbackEnvelope }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(kind.type.name, forKey: .type)
        try container.encode(id, forKey: .id)
        try container.encode(direction, forKey: .direction)
        try container.encode(Trigger(button: triggerButton, interval: triggerInterval), forKey: .trigger)
        try container.encode(Replay(length: replayLength, delay: replayDelay), forKey: .replay)
        switch kind {
        case .rumble(let strong, let weak):
            try container.encode(Rumble(strongMagnitude: strong, weakMagnitude: weak), forKey: .rumble)
        case .periodic(let waveform, let period, let magnitude, let offset, let phase, let envelope):
            let periodic = Periodic(
                waveform: waveform.name, period: period, magnitude: magnitude, offset: offset, phase: phase,
                envelope: envelope)
            try container.encode(periodic, forKey: .periodic)
        case .constant(let level, let envelope):
            try container.encode(Constant(level: level, envelope: envelope), forKey: .constant)
        case .ramp(let start, let end, let envelope):
            try container.encode(Ramp(startLevel: start, endLevel: end, envelope: envelope), forKey: .ramp)
        case .condition(_, let axes):
            try container.encode(axes, forKey: .condition)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let typeName = try container.decode(String.self, forKey: .type)
        guard let type = ForceFeedbackFeature(name: typeName), type.isEffectType else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown effect type \(typeName)")
        }
        let kind: ForceFeedbackEffectKind
        switch type {
        case .rumble:
            let rumble = try container.decode(Rumble.self, forKey: .rumble)
            kind = .rumble(strong: rumble.strongMagnitude, weak: rumble.weakMagnitude)
        case .periodic:
            let periodic = try container.decode(Periodic.self, forKey: .periodic)
            guard let waveform = ForceFeedbackFeature(name: periodic.waveform), waveform.isWaveform else {
                throw DecodingError.dataCorruptedError(
                    forKey: .periodic, in: container, debugDescription: "unknown waveform \(periodic.waveform)")
            }
            kind = .periodic(
                waveform: waveform, period: periodic.period, magnitude: periodic.magnitude,
                offset: periodic.offset, phase: periodic.phase, envelope: periodic.envelope)
        case .constant:
            let constant = try container.decode(Constant.self, forKey: .constant)
            kind = .constant(level: constant.level, envelope: constant.envelope)
        case .ramp:
            let ramp = try container.decode(Ramp.self, forKey: .ramp)
            kind = .ramp(startLevel: ramp.startLevel, endLevel: ramp.endLevel, envelope: ramp.envelope)
        default:
            kind = .condition(type: type, axes: try container.decode([ForceFeedbackCondition].self, forKey: .condition))
        }
        let trigger = try container.decode(Trigger.self, forKey: .trigger)
        let replay = try container.decode(Replay.self, forKey: .replay)
        self.init(
            id: try container.decode(Int16.self, forKey: .id), kind: kind,
            direction: try container.decode(UInt16.self, forKey: .direction),
            triggerButton: trigger.button, triggerInterval: trigger.interval,
            replayLength: replay.length, replayDelay: replay.delay)
    }
}
