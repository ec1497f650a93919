// The emulated DualSense's voice coils: what they play of the haptics reports (0x32) they received. A real
// pad's buffering is not published; this is our model of it. Received reports form a FIFO played at 3000 Hz:
// a report that finds the FIFO empty starts playing when it arrives, any other plays right after the one
// before it. Pure: it is fed the record (arrival times and decoded packets) and answers what played when.
internal import LinuxInput

/// One of the DualSense's two voice-coil actuators.
package enum VoiceCoil: Sendable, Hashable, CaseIterable {
    case left
    case right
}

/// The FIFO model of the voice coils, fed in arrival order.
///
/// A **stream** is a run of reports each arriving less than `streamGap` (100 ms) after the FIFO ran dry, or
/// while it still held samples. An **underrun** is a report of a stream that arrives after the FIFO ran dry:
/// the coils fell silent for `silence` seconds they were not meant to. A report arriving `streamGap` or more
/// after the FIFO ran dry starts a new stream (a pattern that ended, then another), which is no underrun.
package struct VoiceCoilPlayback: Sendable {
    /// Frames per second the coils play.
    package static let sampleRate = Double(DualSenseHapticsReport.sampleRate)
    /// The silence after which the next report starts a new stream rather than being late.
    package static let streamGap = 0.1

    /// A report the coils play, and when.
    package struct PlayedReport: Sendable, Hashable {
        /// The report's counter.
        package var counter: Int
        /// When it arrived: seconds on `CLOCK_MONOTONIC` (the record's `time`).
        package var arrival: Double
        /// When its first frame plays.
        package var start: Double
        package var left: [Int8]
        package var right: [Int8]

        /// When its last frame has played.
        package var end: Double { start + Double(left.count) / VoiceCoilPlayback.sampleRate }
        /// How long it waited in the FIFO: the stream's lead over the coils when it arrived.
        package var queued: Double { start - arrival }

        package func samples(_ coil: VoiceCoil) -> [Int8] { coil == .left ? left : right }
    }

    /// A report that arrived after the FIFO of its stream ran dry.
    package struct Underrun: Sendable, Hashable {
        package var counter: Int
        package var arrival: Double
        /// How long the coils were silent before it: arrival minus the end of the report before it.
        package var silence: Double
    }

    /// The reports played, in order (the oldest may have been discarded).
    package private(set) var played: [PlayedReport] = []
    package private(set) var underruns: [Underrun] = []
    /// When each stream started playing.
    package private(set) var streamStarts: [Double] = []
    /// Reports received and played as nothing (bad CRC, other sub-packet headers).
    package private(set) var refusedCount = 0

    package init() {}

    /// The playback of every decoded waveform in `records`, in their order.
    package init(records: some Sequence<PadRecord>) {
        for record in records {
            if let packet = record.waveform { receive(packet, at: record.time) }
        }
    }

    /// Takes a report that arrived at `time`.
    package mutating func receive(_ packet: WaveformPacket, at time: PadTimestamp) {
        guard let left = packet.left, let right = packet.right else {
            refusedCount += 1
            return
        }
        let arrival = time.seconds
        var start = arrival
        if let previous = played.last?.end {
            if arrival <= previous {
                start = previous
            } else if arrival - previous < Self.streamGap {
                underruns.append(Underrun(counter: packet.counter, arrival: arrival, silence: arrival - previous))
            } else {
                streamStarts.append(arrival)
            }
        } else {
            streamStarts.append(arrival)
        }
        played.append(PlayedReport(counter: packet.counter, arrival: arrival, start: start, left: left, right: right))
    }

    /// When the FIFO runs dry: the end of the last report received (nil before any).
    package var end: Double? { played.last?.end }

    /// When the last non-zero sample of `coil` (of either coil when nil) starts playing: after it, plus one
    /// frame (1/3000 s), the coil is at rest. Nil when none was played.
    package func lastMotion(of coil: VoiceCoil? = nil) -> Double? {
        let coils = coil.map { [$0] } ?? VoiceCoil.allCases
        for report in played.reversed() {
            let last = coils.compactMap { coil in report.samples(coil).lastIndex { $0 != 0 } }.max()
            if let last { return report.start + Double(last) / Self.sampleRate }
        }
        return nil
    }

    /// What the coils play from `from` (default: the first report's start) until `through` (default: the end of
    /// the last), on a grid of frames at 3000 Hz starting at `from`: each report lands on the frame nearest its
    /// start, and silence fills what no report covers.
    package func waveform(from: Double? = nil, through: Double? = nil) -> PlayedWaveform {
        guard let first = played.first, let last = played.last else {
            return PlayedWaveform(start: from ?? 0, left: [], right: [])
        }
        let origin = from ?? first.start
        let count = max(0, Int((((through ?? last.end) - origin) * Self.sampleRate).rounded()))
        var left = [Float](repeating: 0, count: count)
        var right = [Float](repeating: 0, count: count)
        for report in played.reversed() {
            if report.end <= origin { break }
            let base = Int(((report.start - origin) * Self.sampleRate).rounded())
            for index in report.left.indices where base + index >= 0 && base + index < count {
                left[base + index] = PlayedWaveform.level(report.left[index])
                right[base + index] = PlayedWaveform.level(report.right[index])
            }
        }
        return PlayedWaveform(start: origin, left: left, right: right)
    }

    /// Drops the reports that ended before `time`, keeping the last one (the FIFO's end), so that a long run
    /// that only looks at recent playback does not grow without bound.
    package mutating func discardPlayed(endingBefore time: Double) {
        let keep = played.dropLast().prefix { $0.end < time }.count
        if keep > 0 { played.removeFirst(keep) }
    }
}

/// A stretch of what the coils played: frames at 3000 Hz, -1...1 (a sample's byte / 127).
package struct PlayedWaveform: Sendable, Hashable {
    /// When the first frame plays: seconds on `CLOCK_MONOTONIC`.
    package var start: Double
    package var left: [Float]
    package var right: [Float]

    package var sampleRate: Double { VoiceCoilPlayback.sampleRate }
    package var frameCount: Int { left.count }
    package var duration: Double { Double(frameCount) / sampleRate }

    package func samples(_ coil: VoiceCoil) -> [Float] { coil == .left ? left : right }

    /// The frames interleaved left, right: a stereo clip's sample order.
    package var interleaved: [Float] { zip(left, right).flatMap { [$0, $1] } }

    /// The level a received byte drives: the inverse of how the product scales -1...1 to -127...127
    /// (`DualSenseHapticsReport.sample`); -128 lands just below -1.
    package static func level(_ sample: Int8) -> Float { Float(sample) / 127 }

    /// RMS and dominant frequency of `coil` per window of `length` seconds (a shorter last window is dropped).
    package func windows(_ coil: VoiceCoil, length: Double) -> [WaveformAnalysis.Window] {
        WaveformAnalysis.windows(samples(coil), sampleRate: sampleRate, start: start, length: length)
    }
}
