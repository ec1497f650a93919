public import AHAP

/// Stereo sample frames for two actuators, each sample in -1...1 once limited: `left` drives the left handle's
/// actuator, `right` the right one's. Frame `i` of a block rendered from frame `p` is frame `p + i` of the stream.
public struct ActuatorFrames: Sendable, Hashable {
    public var left: [Double]
    public var right: [Double]

    public init(left: [Double], right: [Double]) {
        self.left = left
        self.right = right
    }

    /// `count` silent frames.
    public static func silent(count: Int) -> ActuatorFrames {
        let zeros = [Double](repeating: 0, count: Swift.max(count, 0))
        return ActuatorFrames(left: zeros, right: zeros)
    }

    /// The number of frames (the shorter channel's length, should they differ).
    public var count: Int { Swift.min(left.count, right.count) }

    /// Left and right alternating, frame by frame: the layout of interleaved PCM.
    public var interleaved: [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(2 * count)
        for index in 0..<count {
            samples.append(left[index])
            samples.append(right[index])
        }
        return samples
    }

    /// These frames followed by `next`.
    public func appending(_ next: ActuatorFrames) -> ActuatorFrames {
        ActuatorFrames(left: left + next.left, right: right + next.right)
    }

    /// Several players' frames over the same stretch of the stream: summed per channel, sample by sample, then
    /// passed through `limiter`, so the result stays within -1...1 however many play. The length is the
    /// longest part's; a shorter part is silent after its end.
    public static func mixed(_ parts: [ActuatorFrames], limiter: SoftLimiter = .standard) -> ActuatorFrames {
        let length = parts.map(\.count).max() ?? 0
        var result = ActuatorFrames.silent(count: length)
        for part in parts {
            for index in 0..<part.count {
                result.left[index] += part.left[index]
                result.right[index] += part.right[index]
            }
        }
        for index in 0..<length {
            result.left[index] = limiter(result.left[index])
            result.right[index] = limiter(result.right[index])
        }
        return result
    }
}

/// Renders an AHAP pattern as waveforms for two voice-coil actuators: pure and deterministic.
///
/// What the pattern means is read once, by `PatternVoices`, as for the motors: the same events, envelopes
/// (attack, sustain or decay, release), dynamic parameters and curves, and the same limit on events sounding at
/// once. Each sounding event is a sine carrier whose frequency follows its sharpness (`frequencies`, control
/// included) and whose amplitude follows its level through `VibrationAmplitude`; a transient's flat top is a
/// `TransientBurst` of whole cycles. The carrier's phase advances by the frequency of each frame, so it stays
/// continuous when the frequency moves. Events sum; the sum is limited where players are mixed
/// (`ActuatorFrames.mixed`). `docs/rendering.md` ("Waveforms for voice coils") gives the reasons.
///
/// Frame `k` is at pattern time `k · playbackRate / sampleRate`: a player running at another rate moves through
/// the pattern faster or slower while each carrier keeps its frequency (sharpness is a pitch the hand feels, not
/// a tape speed), and a transient's burst keeps its whole cycles. Rendering is incremental: `render(from:count:)` gives any block
/// of frames (a seek is another starting frame), and a `WaveformCursor` carries on from block to block without
/// going back. Every path computes each sample by the same operations, so blocks rendered either way, in any
/// split, equal one block rendered at once, bit for bit.
public struct WaveformRenderer: Sendable {
    /// Frames per second (3000 for the DualSense over Bluetooth, 48000 over USB).
    public let sampleRate: Double
    /// Pattern seconds per second of output (a player's rate; 1 as written).
    public let playbackRate: Double
    /// Frames per second of pattern time: `sampleRate / playbackRate`.
    public let framesPerPatternSecond: Double
    /// Which actuators play: both (`all`), or the left or right one alone.
    public let locality: HapticLocality
    public let frequencies: SharpnessFrequencyMap
    public let burst: TransientBurst

    let score: PatternVoices
    /// Per voice: the first frame at or after its start, and the first at or after its end.
    let firstFrames: [Int]
    let endFrames: [Int]
    /// Voice indices ordered by first frame (then pattern order).
    let byFirstFrame: [Int]
    /// For each place in `byFirstFrame`: the latest end frame of the voices up to it.
    let latestEnds: [Int]
    /// The first frame from which the output is silent for good.
    public let endFrame: Int

    /// The renderer of `pattern` with any controls sent at run time (in pattern time). A sample rate that is not
    /// positive and finite renders silence.
    public init(
        pattern: HapticPattern, controls: RuntimeControls = .none, sampleRate: Double, playbackRate: Double = 1,
        locality: HapticLocality = .all, frequencies: SharpnessFrequencyMap = .voiceCoil,
        burst: TransientBurst = .voiceCoil
    ) {
        let speed = playbackRate.isFinite && playbackRate > 0 ? playbackRate : 1
        let outputRate = sampleRate.isFinite && sampleRate > 0 ? sampleRate : 0
        self.sampleRate = outputRate
        self.playbackRate = speed
        framesPerPatternSecond = outputRate / speed
        let rate = framesPerPatternSecond
        self.locality = locality
        self.frequencies = frequencies
        self.burst = burst
        let ceiling = outputRate / Self.samplesPerCycleAtLeast
        score = PatternVoices(
            pattern: pattern, controls: controls,
            pulseLength: {
                speed * burst.length(frequency: Swift.min(frequencies.frequency(sharpness: $0), ceiling))
            })
        guard rate > 0 else {
            firstFrames = []
            endFrames = []
            byFirstFrame = []
            latestEnds = []
            endFrame = 0
            return
        }
        let starts = score.voices.map { Self.firstFrame(atOrAfter: $0.start, rate: rate) }
        firstFrames = starts
        let ends = score.voices.map { Self.firstFrame(atOrAfter: $0.end, rate: rate) }
        endFrames = ends
        endFrame = ends.max() ?? 0
        let order = starts.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
        byFirstFrame = order
        var latest = Int.min
        latestEnds = order.map { voice in
            latest = Swift.max(latest, ends[voice])
            return latest
        }
    }

    /// The first frame at or after `frame` at which a voice is under way (whether or not its amplitude is above
    /// zero there): `frame` itself when one is, else the first frame of the next voice to begin; nil when no voice
    /// sounds from `frame` on. A binary search: a logarithm of the voices, however long the pattern.
    public func firstVoiceFrame(atOrAfter frame: Int) -> Int? {
        let started = byFirstFrame.partitionPoint { firstFrames[$0] > frame }
        if started > 0, latestEnds[started - 1] > frame { return frame }
        return byFirstFrame[started...].first { firstFrames[$0] < endFrames[$0] }.map { firstFrames[$0] }
    }

    /// A carrier never has fewer samples per cycle than this: the frequency is capped at `sampleRate / 4`, so a
    /// sine still has a crest and a trough between zero crossings at any sample rate (the voice-coil band is far
    /// below it at 3 kHz and above).
    public static let samplesPerCycleAtLeast: Double = 4

    /// The first frame `k` with `k / rate >= time` (the division as every path computes it).
    static func firstFrame(atOrAfter time: Double, rate: Double) -> Int {
        let scaled = (time * rate).rounded(.up)
        guard scaled.isFinite, abs(scaled) < 1e15 else { return time < 0 ? Int.min / 2 : Int.max / 2 }
        var frame = Int(scaled)
        while Double(frame - 1) / rate >= time { frame -= 1 }
        while Double(frame) / rate < time { frame += 1 }
        return frame
    }

    /// The frame `count` frames after `frame`, held within `Int`'s range: frames past its end are silence (no
    /// voice reaches that far: `firstFrame(atOrAfter:rate:)`), and a caller's frame near `Int.max` is no trap.
    static func frame(_ count: Int, after frame: Int) -> Int {
        let (sum, overflow) = frame.addingReportingOverflow(count)
        return overflow ? (count > 0 ? .max : .min) : sum
    }

    /// `count` frames from `frame`, the events summed but not yet limited (`ActuatorFrames.mixed` limits).
    public func render(from frame: Int, count: Int) -> ActuatorFrames {
        var cursor = cursor(at: frame)
        return cursor.render(count: count)
    }

    /// A cursor positioned at `frame`, with the phase of every carrier sounding there worked out from its start.
    public func cursor(at frame: Int) -> WaveformCursor {
        WaveformCursor(renderer: self, position: frame)
    }

    /// The carriers sounding at `frame`: each sounding voice's frequency (capped) and amplitude, in pattern
    /// order. What a plot of the waveform's pitch over time shows.
    public func carriers(at frame: Int) -> [(frequency: Double, amplitude: Double)] {
        firstFrames.indices.compactMap { voice in
            guard firstFrames[voice] <= frame, frame < endFrames[voice] else { return nil }
            var memo = CarrierMemo()
            return carrier(of: voice, at: frame, memo: &memo)
        }
    }

    // MARK: One voice at one frame

    /// What one voice plays at one frame: its carrier frequency (capped) and, when `amplitude` is asked for, its
    /// amplitude (0 otherwise). `memo` keeps the last values the powers were taken for, so a steady stretch costs
    /// none; equal inputs give equal outputs, so it changes no sample.
    func carrier(of voice: Int, at frame: Int, memo: inout CarrierMemo, amplitude: Bool = true)
        -> (frequency: Double, amplitude: Double)
    {
        let time = Double(frame) / framesPerPatternSecond
        let eventVoice = score.voices[voice]
        let controls = score.controlValues(at: time, piece: time)
        let sharpness = eventVoice.sharpness(controls: controls)
        if sharpness != memo.sharpness {
            memo = CarrierMemo(
                sharpness: sharpness,
                frequency: Swift.min(
                    frequencies.frequency(sharpness: sharpness), sampleRate / Self.samplesPerCycleAtLeast))
        }
        guard amplitude else { return (memo.frequency, 0) }
        let level = eventVoice.level(at: time, piece: time, controls: controls)
        if level != memo.level {
            memo.level = level
            memo.amplitude = VibrationAmplitude.amplitude(level: level, frequency: memo.frequency)
        }
        return (memo.frequency, memo.amplitude)
    }

    /// The phase (in cycles, 0..<1) of `voice`'s carrier at its first frame: the carrier starts at a rising zero
    /// crossing at the event's start, which may fall between two frames.
    func initialPhase(of voice: Int, memo: inout CarrierMemo) -> Double {
        let frame = firstFrames[voice]
        let lead = (Double(frame) / framesPerPatternSecond - score.voices[voice].start) / playbackRate
        return Self.wrapped(lead * carrier(of: voice, at: frame, memo: &memo, amplitude: false).frequency)
    }

    /// The stretch of `voice`'s carrier at its first frame.
    func firstStretch(of voice: Int, memo: inout CarrierMemo) -> CarrierStretch {
        let frame = firstFrames[voice]
        let phase = initialPhase(of: voice, memo: &memo)
        let frequency = carrier(of: voice, at: frame, memo: &memo, amplitude: false).frequency
        return CarrierStretch(anchor: frame, anchorPhase: phase, frequency: frequency, sampleRate: sampleRate)
    }

    /// The stretch `voice`'s carrier is in after the frames before `frame` (past its first), as a cursor that
    /// played them from the voice's start would hold it: the one rule every path follows. Where the sharpness
    /// control holds (`ControlSchedule.steadyUntil`), the frequency cannot change, and the frames up to the
    /// control's next change are passed over at once; within a sharpness curve each frame is looked at. So a
    /// cursor placed far into a long voice (a seek, or a control sent while it sounds) costs the control's changes
    /// on the way, not every frame.
    func stretch(of voice: Int, before frame: Int) -> CarrierStretch {
        var memo = CarrierMemo()
        var stretch = firstStretch(of: voice, memo: &memo)
        var current = firstFrames[voice] + 1
        while current < frame {
            let frequency = carrier(of: voice, at: current, memo: &memo, amplitude: false).frequency
            stretch.continue(at: current, frequency: frequency)
            let time = Double(current) / framesPerPatternSecond
            let steady = score.controls.sharpness.steadyUntil(time).map {
                Self.firstFrame(atOrAfter: $0, rate: framesPerPatternSecond)
            }
            current = Swift.max(current + 1, Swift.min(steady ?? current + 1, frame))
        }
        return stretch
    }

    /// `phase` brought into 0..<1.
    static func wrapped(_ phase: Double) -> Double {
        let whole = phase.rounded(.down)
        return phase - whole
    }
}

/// A run of frames over which a voice's carrier keeps one frequency: the phase at frame `k` of it is
/// `anchorPhase + (k - anchor) · frequency / sampleRate`, in cycles, wrapped into 0..<1. Computed from the run's
/// start rather than added up frame by frame, a frame's phase can be found without stepping through the run (a
/// cursor placed part-way), and a long steady tone keeps its phase without the sum's rounding drift. A new run
/// starts, at the phase the old one reached, at each frame whose frequency differs from the run's.
struct CarrierStretch: Sendable {
    private(set) var anchor: Int
    private(set) var anchorPhase: Double
    private(set) var frequency: Double
    /// Cycles per frame.
    private(set) var increment: Double
    private let sampleRate: Double

    init(anchor: Int, anchorPhase: Double, frequency: Double, sampleRate: Double) {
        self.anchor = anchor
        self.anchorPhase = anchorPhase
        self.frequency = frequency
        self.sampleRate = sampleRate
        increment = frequency / sampleRate
    }

    /// The phase at `frame` (in this run).
    func phase(at frame: Int) -> Double {
        WaveformRenderer.wrapped(anchorPhase + Double(frame - anchor) * increment)
    }

    /// Takes `frame`, whose carrier has `frequency`, into the run, or starts a new run there when the frequency
    /// differs.
    mutating func `continue`(at frame: Int, frequency: Double) {
        guard frequency != self.frequency else { return }
        self = CarrierStretch(
            anchor: frame, anchorPhase: phase(at: frame), frequency: frequency, sampleRate: sampleRate)
    }
}

/// The last sharpness and level a voice's carrier was computed for, and what they gave.
struct CarrierMemo: Sendable {
    var sharpness = Double.nan
    var frequency = 0.0
    var level = Double.nan
    var amplitude = 0.0
}

/// A position in a `WaveformRenderer`'s stream and the phase of each carrier sounding there: what a streamer keeps
/// between blocks so that each block costs only its own frames.
public struct WaveformCursor: Sendable {
    public let renderer: WaveformRenderer
    /// The next frame `render(count:)` produces.
    public private(set) var position: Int
    /// The carrier stretch of each voice sounding at `position` (after the frames before it), by voice index.
    private var stretches: [Int: CarrierStretch] = [:]
    /// The carrier memo of each voice sounding at `position`.
    private var memos: [Int: CarrierMemo] = [:]
    /// The voices started before `position` and still sounding at it, ascending.
    private var active: [Int]
    /// Where in `renderer.byFirstFrame` the voices starting at or after `position` begin.
    private var nextStart: Int

    init(renderer: WaveformRenderer, position: Int) {
        self.renderer = renderer
        self.position = position
        nextStart = renderer.byFirstFrame.partitionPoint { renderer.firstFrames[$0] >= position }
        active = renderer.byFirstFrame[..<nextStart].filter { renderer.endFrames[$0] > position }.sorted()
        for voice in active { stretches[voice] = renderer.stretch(of: voice, before: position) }
    }

    /// The next `count` frames (events summed, not yet limited); the cursor moves past them.
    public mutating func render(count: Int) -> ActuatorFrames {
        let count = Swift.max(count, 0)
        var frames = ActuatorFrames.silent(count: count)
        let blockEnd = WaveformRenderer.frame(count, after: position)
        guard count > 0, renderer.sampleRate > 0 else {
            position = blockEnd
            return frames
        }
        let voices = voices(until: blockEnd)
        // Voice by voice over the block, each frame's sum taking the voices in pattern order as frame by frame would
        // (0 + the first + the second ...), so the samples are the same bits; a voice's memo and stretch stay local.
        var sums = [Double](repeating: 0, count: count)
        for voice in voices {
            let firstFrame = renderer.firstFrames[voice]
            let from = Swift.max(firstFrame, position)
            let to = Swift.min(renderer.endFrames[voice], blockEnd)
            guard from < to else { continue }
            var memo = memos[voice] ?? CarrierMemo()
            var stretch = stretches[voice]
            for frame in from..<to {
                var current =
                    frame == firstFrame
                    ? renderer.firstStretch(of: voice, memo: &memo)
                    : stretch ?? renderer.firstStretch(of: voice, memo: &memo)
                let carrier = renderer.carrier(of: voice, at: frame, memo: &memo)
                current.continue(at: frame, frequency: carrier.frequency)
                stretch = current
                sums[frame - position] += carrier.amplitude * PureMath.sin(2 * PureMath.pi * current.phase(at: frame))
            }
            memos[voice] = memo
            stretches[voice] = stretch
        }
        switch renderer.locality {
        case .all, .triggers:
            frames.left = sums
            frames.right = sums
        case .leftHandle, .leftTrigger:
            frames.left = sums
        case .rightHandle, .rightTrigger:
            frames.right = sums
        }
        for voice in voices where renderer.endFrames[voice] <= blockEnd {
            stretches[voice] = nil
            memos[voice] = nil
        }
        active = voices.filter { renderer.endFrames[$0] > blockEnd }
        position = blockEnd
        return frames
    }

    /// The voices sounding somewhere in `position..<end`, in pattern order (the order their samples sum in): those
    /// already sounding and those starting before `end`. Costs the voices concerned, not the whole pattern.
    private mutating func voices(until end: Int) -> [Int] {
        var voices = active
        while nextStart < renderer.byFirstFrame.count, renderer.firstFrames[renderer.byFirstFrame[nextStart]] < end {
            let voice = renderer.byFirstFrame[nextStart]
            if renderer.endFrames[voice] > position { voices.append(voice) }
            nextStart += 1
        }
        return voices.sorted()
    }
}
