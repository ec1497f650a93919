import AHAP

/// The one reading of what a pattern asks of its actuators, shared by every renderer: its haptic events as voices
/// (envelopes over pattern time), the dynamic controls acting on them, and which voices sound at all (at most
/// `PatternRenderer.maximumSoundingEvents` at once). The motor renderer splits a voice's level between two motors
/// by sharpness; the waveform renderer plays it as a carrier whose frequency follows sharpness. Both ask the same
/// questions here: a voice's level and its sharpness at an instant.
struct PatternVoices: Sendable {
    let controls: ControlSet
    /// The voices that sound, in pattern order (an event starting while the limit sounds is left out).
    let voices: [EventVoice]

    /// The voices of `pattern` with `runtime` controls; `pulseLength` gives a transient's flat top in seconds
    /// for its sharpness at onset (the renderer's choice: a rumble motor's spin-up, a voice coil's burst).
    init(
        pattern: HapticPattern, controls runtime: RuntimeControls, pulseLength: (_ sharpness: Double) -> Double
    ) {
        let controls = ControlSet(
            parameters: pattern.dynamicParameters + runtime.parameters,
            curves: pattern.parameterCurves + runtime.curves)
        let all = pattern.events.compactMap {
            EventVoice(event: $0, controls: controls, pulseLength: pulseLength)
        }
        self.controls = controls
        voices = SoundingVoices.admitted(all)
    }

    /// `voices` under `controls`, admitted as a pattern's are.
    init(controls: ControlSet, voices: [EventVoice]) {
        self.controls = controls
        self.voices = SoundingVoices.admitted(voices)
    }

    /// The time after which every voice is silent (0 when there is none).
    var end: Double { voices.map(\.end).max() ?? 0 }

    /// The intensity and sharpness controls at `time`, evaluated on the piece containing `piece`.
    func controlValues(at time: Double, piece: Double) -> ControlValues {
        ControlValues(
            intensity: controls.intensity.value(at: time, piece: piece),
            sharpness: controls.sharpness.value(at: time, piece: piece))
    }
}

/// The intensity control (a factor) and the sharpness control (an offset) at one instant.
struct ControlValues: Sendable {
    var intensity: Double
    var sharpness: Double
}

extension EventVoice {
    /// The voice's level at `time`: its intensity times the intensity control, clamped to 0...1, times its
    /// envelope's gain on the piece containing `piece`.
    func level(at time: Double, piece: Double, controls: ControlValues) -> Double {
        Swift.min(Swift.max(intensity * controls.intensity, 0), 1) * gain(at: time, piece: piece)
    }

    /// The voice's sharpness with the sharpness control added, clamped to 0...1.
    func sharpness(controls: ControlValues) -> Double {
        Swift.min(Swift.max(sharpness + controls.sharpness, 0), 1)
    }
}

/// The voices sounding at a sequence of increasing times, found by a sweep rather than a scan of every voice per
/// piece, so that a pattern of many events renders in about n log n. Voices keep their pattern order, so levels sum
/// in the same order as a scan would; at most `PatternRenderer.maximumSoundingEvents` sound at once (the
/// earlier-starting ones, then the earlier in the pattern).
struct SoundingVoices {
    private let voices: [EventVoice]
    /// Indices of `voices` by start time.
    private let byStart: [Int]
    private var started = 0
    /// Indices of the voices started and not yet ended, ascending.
    private var current: [Int] = []
    /// Indices of every voice let in so far.
    private var admittedIndices: [Int] = []

    init(_ voices: [EventVoice]) {
        self.voices = voices
        byStart = voices.indices.sorted { (voices[$0].start, $0) < (voices[$1].start, $1) }
    }

    /// The voices with `start <= time < end`; `time` must not decrease from one call to the next.
    mutating func at(_ time: Double) -> [EventVoice] {
        while started < byStart.count, voices[byStart[started]].start <= time {
            let index = byStart[started]
            started += 1
            current.removeAll { voices[$0].end <= voices[index].start }
            guard current.count < PatternRenderer.maximumSoundingEvents else { continue }
            current.insert(index, at: current.firstIndex { $0 > index } ?? current.endIndex)
            admittedIndices.append(index)
        }
        current.removeAll { voices[$0].end <= time }
        return current.map { voices[$0] }
    }

    /// The voices of `voices` that the limit lets in, in their order. No more than the limit of them sound at any
    /// instant, so a sweep over them alone finds the same voices as a sweep over all.
    static func admitted(_ voices: [EventVoice]) -> [EventVoice] {
        admittedIndices(voices).map { voices[$0] }
    }

    /// The indices into `voices` of those `admitted` lets in, ascending.
    static func admittedIndices(_ voices: [EventVoice]) -> [Int] {
        var sweep = SoundingVoices(voices)
        _ = sweep.at(.infinity)
        return sweep.admittedIndices.sorted()
    }
}
