// A report that carries actuator waveform rather than motor levels, as an emulated controller decoded it: the
// DualSense's Bluetooth haptics report 0x32 (32 stereo frames of signed 8-bit PCM at 3000 Hz for its two voice
// coils). Part of the record (`PadRecord.waveform`); the playback model (`VoiceCoilPlayback`) plays it.
internal import LinuxInput

/// A decoded waveform report. `left` and `right` are present exactly when the controller plays the report;
/// a report it refuses (bad CRC, other sub-packet headers) is recorded with its counter and played as nothing.
public struct WaveformPacket: Equatable, Hashable, Sendable, Codable {
    /// The report's counter (byte 10 of report 0x32), as received even when the report is refused.
    public var counter: Int
    /// The report's CRC checks.
    public var crcValid: Bool
    /// The left actuator's samples, -128...127, one per frame; nil when the report is refused.
    public var left: [Int8]?
    /// The right actuator's samples.
    public var right: [Int8]?

    public init(counter: Int, crcValid: Bool, left: [Int8]?, right: [Int8]?) {
        self.counter = counter
        self.crcValid = crcValid
        self.left = left
        self.right = right
    }

    /// Whether the controller plays the samples.
    public var isPlayed: Bool { left != nil && right != nil }

    /// The DualSense's haptics report 0x32 as the pad takes it (`DualSenseHapticsReport(bytes:)`); nil for a
    /// report of another id or length, which is no waveform report at all.
    static func dualSense(_ report: [UInt8]) -> WaveformPacket? {
        guard report.count == DualSenseHapticsReport.size, report[0] == DualSenseHapticsReport.id else { return nil }
        guard let decoded = DualSenseHapticsReport(bytes: report) else {
            return WaveformPacket(
                counter: Int(report[10]), crcValid: PlayStationCRC.isValid(report, seed: PlayStationCRC.outputSeed),
                left: nil, right: nil)
        }
        return WaveformPacket(counter: Int(decoded.counter), crcValid: true, left: decoded.left, right: decoded.right)
    }
}
