public import AHAP

/// Which motors a pattern plays on (GameController's localities as evdev can offer them); on voice coils, which
/// channels (`WaveformRenderer`: `all` both, `left` and `right` one each).
public enum HapticLocality: String, Sendable, Hashable, CaseIterable {
    /// Both motors, split by sharpness.
    case all
    /// The left handle: the strong motor only, carrying the whole level (sharpness cannot be expressed).
    case leftHandle = "left"
    /// The right handle: the weak motor only, carrying the whole level.
    case rightHandle = "right"
    /// The left trigger's motor (an Xbox Wireless Controller's impulse trigger), carrying the whole level. It is
    /// rendered as the strong motor alone, which the trigger output plays on the left trigger.
    case leftTrigger = "left-trigger"
    /// The right trigger's motor, carrying the whole level: rendered as the weak motor alone.
    case rightTrigger = "right-trigger"
    /// Both trigger motors, each carrying the whole level: rendered as both motors at the same level.
    case triggers

    /// Whether the locality is a trigger's (only a pad with trigger motors has it).
    public var isTrigger: Bool { self == .leftTrigger || self == .rightTrigger || self == .triggers }

    /// Core Haptics' name for it (`CHHapticEngine.Locality`): `default`... here `all`, `leftHandle`,
    /// `rightHandle`, `leftTrigger`, `rightTrigger`, `triggers`.
    public var coreHapticsName: String {
        switch self {
        case .all: "default"
        case .leftHandle: "leftHandle"
        case .rightHandle: "rightHandle"
        case .leftTrigger: "leftTrigger"
        case .rightTrigger: "rightTrigger"
        case .triggers: "triggers"
        }
    }

    /// The locality named `name`: ours (`left-trigger`) or Core Haptics' (`leftTrigger`, `default` for all).
    public init?(named name: String) {
        if let ours = HapticLocality(rawValue: name) {
            self = ours
        } else if let theirs = HapticLocality.allCases.first(where: { $0.coreHapticsName == name }) {
            self = theirs
        } else {
            return nil
        }
    }
}

/// Controls sent to a player while it runs (`sendParameters(_:atTime:)`, `scheduleParameterCurve(_:atTime:)`),
/// with times already converted to pattern time. They act like the pattern's own parameters and curves and,
/// started later, win over them.
///
/// A control sent replaces every one of its identifier sent before (a parameter or a curve): what was sent
/// earlier has acted already (a player holds a control sent for a later engine time until then), and the newest
/// sent is the player's value of that control from now on. A player
/// steered many times a second for minutes so keeps one source per control, and a change costs the same render
/// at the first send and the ten-thousandth.
public struct RuntimeControls: Sendable, Hashable {
    public var parameters: [HapticDynamicParameter]
    public var curves: [HapticParameterCurve]

    public init(parameters: [HapticDynamicParameter] = [], curves: [HapticParameterCurve] = []) {
        self.parameters = parameters
        self.curves = curves
    }

    public static let none = RuntimeControls()

    /// Parameters sent at `patternTime` (each parameter's own `relativeTime` is ignored, as Core Haptics does
    /// for `sendParameters`), each replacing what was sent before for its identifier. `fromEachPassStart` (a
    /// looping player): each also acts from the start of the pattern, so that the passes after this one play
    /// with it from their beginning rather than only from `patternTime` on; in this pass that start has passed.
    public mutating func send(
        _ parameters: [HapticDynamicParameter], atPatternTime patternTime: Double, fromEachPassStart: Bool = false
    ) {
        for parameter in parameters {
            forget(parameter.parameterID)
            let times = fromEachPassStart && patternTime > 0 ? [0, patternTime] : [patternTime]
            for time in times {
                self.parameters.append(
                    HapticDynamicParameter(
                        parameterID: parameter.parameterID, value: parameter.value, relativeTime: time))
            }
        }
    }

    /// A curve scheduled to start at `patternTime` (its control points stay relative to its start), replacing
    /// what was sent before for its identifier.
    public mutating func schedule(_ curve: HapticParameterCurve, atPatternTime patternTime: Double) {
        forget(curve.parameterID)
        curves.append(
            HapticParameterCurve(
                parameterID: curve.parameterID, controlPoints: curve.controlPoints, relativeTime: patternTime))
    }

    /// Drops every parameter and curve sent for `id`.
    private mutating func forget(_ id: HapticDynamicParameter.ID) {
        parameters.removeAll { $0.parameterID == id }
        curves.removeAll { $0.parameterID == id }
    }
}

/// Renders AHAP patterns into motor timelines: pure and deterministic.
///
/// The rules (each explained in `docs/rendering.md`): intensity sets the level and sharpness the balance
/// between the motors (`EnvelopeTiming.motorShares`); transients become pulses of the profile's length that
/// ramp down over `DecayTime`; continuous events follow attack, sustain or decay, and release; intensity
/// controls multiply and the others add, results clamp; overlapping events sum per motor and saturate at 1;
/// audio events are skipped.
public struct PatternRenderer: Sendable, Hashable {
    /// The profile whose transient pulse shapes transients, and whose on/off weak motor (one step) hands the
    /// levels its gain turns off to the strong motor: render with the gain the device is planned with. Its gain
    /// and resolution apply later, in `DeviceCommandPlanner`.
    public var profile: RenderProfile
    public var locality: HapticLocality

    /// How far the linear timeline may stray from the exact product of envelopes and curves, per motor.
    /// 1/2048 is eight times finer than the finest 8-bit device step.
    public static let tolerance: Double = 1.0 / 2048
    /// The shortest piece adaptive refinement produces, in seconds (a 1 kHz sample never sees finer detail).
    public static let shortestPiece: Double = 0.0005

    public init(profile: RenderProfile = .genericRumble, locality: HapticLocality = .all) {
        self.profile = profile
        self.locality = locality
    }

    /// The motor timeline of `pattern`, with any controls sent at run time.
    public func render(_ pattern: HapticPattern, controls runtime: RuntimeControls = .none) -> MotorTimeline {
        let pulse = profile.transientPulse.length
        let score = PatternVoices(pattern: pattern, controls: runtime, pulseLength: { _ in pulse })
        let end = score.end
        guard end > 0 else { return .silent }
        var knots = Set<Double>([0, end])
        for voice in score.voices { knots.formUnion(voice.corners.map(\.time)) }
        knots.formUnion(score.controls.knots.filter { $0 > 0 && $0 < end })
        return render(score, cuts: knots.filter { $0 >= 0 && $0 <= end }.sorted())
    }

    /// The timeline of `score` cut at `cuts` (ascending): each piece between two cuts is refined until linear
    /// within `tolerance`; before the first cut is silence.
    private func render(_ score: PatternVoices, cuts: [Double]) -> MotorTimeline {
        var segments: [MotorTimeline.Segment] = []
        var sounding = SoundingVoices(score.voices)
        for (from, to) in zip(cuts, cuts.dropFirst()) where to > from {
            let piece = (from + to) / 2
            let active = sounding.at(piece)
            let evaluate = { (time: Double) in
                self.levels(at: time, piece: piece, voices: active, score: score)
            }
            refine(from: from, to: to, evaluate: evaluate, into: &segments)
        }
        return MotorTimeline(segments: segments)
    }

    /// The pattern's intensity envelope: the summed, controlled intensity of every haptic event before the
    /// split between motors (clamped to 1). What a perfect device would follow; fidelity compares with it.
    public func intensityEnvelope(_ pattern: HapticPattern, controls runtime: RuntimeControls = .none) -> MotorTimeline
    {
        var allMotors = self
        allMotors.locality = .leftHandle
        return allMotors.render(pattern, controls: runtime)
    }

    /// The intensity envelope of `voice` alone under `controls`: the same timeline as `intensityEnvelope` of a
    /// pattern holding only the voice's event with those controls, looking only at the control knots inside the
    /// voice, found by binary search in `sortedKnots` (`controls.knots` in ascending order). A pattern of many
    /// events with controls so costs each event its own span, not the whole pattern's.
    func intensityEnvelope(of voice: EventVoice, controls: ControlSet, sortedKnots: [Double]) -> MotorTimeline {
        let end = voice.end
        guard end > 0 else { return .silent }
        var allMotors = self
        allMotors.locality = .leftHandle
        // Before its first corner the voice is silent: the whole pattern's cuts there give one silent piece.
        let lower = Swift.max(voice.start, 0)
        let inside = sortedKnots.partitionPoint { $0 > lower }..<sortedKnots.partitionPoint { $0 >= end }
        var knots = Set<Double>([lower, end])
        knots.formUnion(voice.corners.map(\.time))
        knots.formUnion(sortedKnots[inside])
        return allMotors.render(
            PatternVoices(controls: controls, voices: [voice]), cuts: knots.filter { $0 >= 0 && $0 <= end }.sorted())
    }

    /// Summed motor levels at `time`, from the pieces containing `piece`.
    private func levels(at time: Double, piece: Double, voices: [EventVoice], score: PatternVoices) -> MotorMagnitudes {
        var strong = 0.0
        var weak = 0.0
        let controls = score.controlValues(at: time, piece: piece)
        for voice in voices {
            let level = voice.level(at: time, piece: piece, controls: controls)
            switch locality {
            case .all where profile.hasStrongMotor != profile.hasWeakMotor:
                // One motor: it carries the whole level, as its handle's locality would; sharpness has nowhere to go.
                if profile.hasStrongMotor { strong += level } else { weak += level }
            case .all:
                let shares = EnvelopeTiming.motorShares(sharpness: voice.sharpness(controls: controls))
                strong += level * shares.strong
                weak += level * shares.weak
            case .leftHandle, .leftTrigger:
                strong += level
            case .rightHandle, .rightTrigger:
                weak += level
            case .triggers:
                strong += level
                weak += level
            }
        }
        strong = Swift.min(strong, 1)
        weak = Swift.min(weak, 1)
        if profile.weakSteps == 1, profile.hasStrongMotor, locality == .all,
            weak * profile.gain < Self.onOffThreshold
        {
            // An on/off weak motor (DualShock 3) rounds a level under one half, after gain, to off: the strong motor
            // carries it instead, so light sharp events are still felt and the louder motor still follows intensity.
            strong = Swift.max(strong, weak)
        }
        return MotorMagnitudes(strong: strong, weak: weak)
    }

    /// The most events that sound at once. An event that starts while this many sound is not played, on any
    /// device (the renderers and `NativePeriodicProgram` all admit events through `SoundingVoices`): no motor
    /// tells 64 overlapping events from fewer (their levels sum and saturate at 1), and the cost of a piece of
    /// the timeline, or of the effects a force device follows, grows with the events sounding in it, so a hostile
    /// pattern of thousands of overlapping events would otherwise take minutes.
    public static let maximumSoundingEvents = 64

    /// The level at which an on/off motor's rounding switches it on.
    static let onOffThreshold = 0.5

    /// Appends linear segments over `from...to` that stay within `tolerance` of `evaluate`, splitting in halves
    /// where the function bends (products of linear pieces, the sharpness split's corner, saturation).
    private func refine(
        from: Double, to: Double, evaluate: (Double) -> MotorMagnitudes, into segments: inout [MotorTimeline.Segment]
    ) {
        let start = evaluate(from)
        let end = evaluate(to)
        let chord = MotorTimeline.Segment(start: from, end: to, startLevels: start, endLevels: end)
        var worst = 0.0
        if to - from > Self.shortestPiece {
            for fraction in [0.25, 0.5, 0.75] {
                let time = from + (to - from) * fraction
                let exact = evaluate(time)
                let linear = chord.levels(at: time)
                worst = Swift.max(worst, abs(exact.strong - linear.strong), abs(exact.weak - linear.weak))
            }
        }
        if worst <= Self.tolerance {
            segments.append(chord)
        } else {
            let middle = (from + to) / 2
            refine(from: from, to: middle, evaluate: evaluate, into: &segments)
            refine(from: middle, to: to, evaluate: evaluate, into: &segments)
        }
    }
}
