public import AHAP

/// One `FF_PERIODIC` (sine) effect, for devices that play periodic effects themselves: the kernel's
/// `ff_replay` (delay, length) and `ff_envelope` (attack and fade, linear ramps) reproduce an event's envelope
/// without any further update from us.
///
/// Times are seconds and levels 0...1 here; the `*Milliseconds` and `*Units` properties give the values of the
/// kernel structure (`u16` milliseconds, levels up to 0x7fff).
public struct NativePeriodicEffect: Sendable, Hashable {
    /// Replay delay: from the program's start (the play call) to the effect's start.
    public var delay: Double
    /// Replay length, envelope included.
    public var length: Double
    /// The sine's period: sharpness mapped onto frequency (`NativePeriodicProgram.frequency(sharpness:)`).
    public var period: Double
    /// The level after the attack and before the fade.
    public var magnitude: Double
    /// The attack ramps linearly from `attackLevel` to `magnitude` over `attackLength`.
    public var attackLength: Double
    public var attackLevel: Double
    /// The fade ramps linearly from `magnitude` to `fadeLevel` over the last `fadeLength` of the replay.
    public var fadeLength: Double
    public var fadeLevel: Double

    /// The kernel's largest level for periodic magnitudes and envelope levels.
    public static let fullScale: Double = 0x7fff

    public var delayMilliseconds: UInt16 { Self.milliseconds(delay) }
    public var lengthMilliseconds: UInt16 { Self.milliseconds(length) }
    public var periodMilliseconds: UInt16 { Swift.max(Self.milliseconds(period), 1) }
    public var attackLengthMilliseconds: UInt16 { Self.milliseconds(attackLength) }
    public var fadeLengthMilliseconds: UInt16 { Self.milliseconds(fadeLength) }
    public var magnitudeUnits: Int16 { Int16(Self.units(magnitude)) }
    public var attackLevelUnits: UInt16 { UInt16(Self.units(attackLevel)) }
    public var fadeLevelUnits: UInt16 { UInt16(Self.units(fadeLevel)) }

    static func milliseconds(_ seconds: Double) -> UInt16 {
        UInt16(Swift.min(Swift.max((seconds * 1000).rounded(), 0), Double(UInt16.max)))
    }

    static func units(_ level: Double) -> Int {
        Int((Swift.min(Swift.max(level, 0), 1) * fullScale).rounded())
    }

    /// The attack and fade around `magnitude`.
    public var envelope: AttackFadeEnvelope<Double> {
        AttackFadeEnvelope(
            attackLength: attackLength, attackLevel: attackLevel, fadeLength: fadeLength, fadeLevel: fadeLevel)
    }

    /// The effect's level at `time` (seconds from the program start), per the kernel's envelope rule.
    public func level(at time: Double) -> Double {
        let local = time - delay
        guard local >= 0, local < length else { return 0 }
        return envelope.level(of: magnitude, elapsed: local, remaining: length - local)
    }
}

/// A pattern compiled for a device with native `FF_PERIODIC`: one effect per haptic event whose envelope the
/// kernel's replay and envelope fields express exactly (to the millisecond). Events with intensity or
/// sharpness controls changing under them, or with shapes an attack-hold-fade envelope cannot express, are
/// listed in `inexactEvents`: play those with rumble commands (or the whole pattern, when any is listed).
public struct NativePeriodicProgram: Sendable, Hashable {
    public var effects: [NativePeriodicEffect]
    /// Indexes into `pattern.events` of the haptic events not compiled.
    public var inexactEvents: [Int]

    public var isExact: Bool { inexactEvents.isEmpty }

    /// The lowest and highest sine frequencies sharpness maps onto, in Hz: the band where hand-held actuators
    /// are felt best (below ~40 Hz a sine feels like separate knocks, above ~200 Hz sensitivity falls off).
    public static let dullFrequency: Double = 40
    public static let sharpFrequency: Double = 200

    /// Sharpness 0...1 to a frequency, geometrically (perceived pitch is logarithmic in frequency).
    public static func frequency(sharpness: Double) -> Double {
        SharpnessFrequencyMap(dull: dullFrequency, sharp: sharpFrequency).frequency(sharpness: sharpness)
    }

    /// Compiles `pattern` for `profile` (its transient pulse and gain).
    public init(pattern: HapticPattern, profile: RenderProfile, controls runtime: RuntimeControls = .none) {
        let controls = ControlSet(
            parameters: pattern.dynamicParameters + runtime.parameters,
            curves: pattern.parameterCurves + runtime.curves)
        let knots = controls.knots
        effects = []
        inexactEvents = []
        for (index, event) in pattern.events.enumerated() where event.isHaptic {
            guard let voice = EventVoice(event: event, controls: controls, pulse: profile.transientPulse) else {
                continue
            }
            let start = voice.start
            let end = voice.end
            let intensityControl = controls.intensity.value(at: start, piece: start)
            let sharpnessControl = controls.sharpness.value(at: start, piece: start)
            let steady =
                !knots.contains { $0 > start && $0 < end }
                && controls.intensity.value(at: end, piece: end) == intensityControl
                && controls.sharpness.value(at: end, piece: end) == sharpnessControl
            let level = Swift.min(Swift.max(voice.intensity * intensityControl, 0), 1) * profile.gain
            guard steady,
                let effect = Self.effect(
                    corners: voice.corners, level: level,
                    period: 1 / Self.frequency(sharpness: voice.sharpness + sharpnessControl))
            else {
                inexactEvents.append(index)
                continue
            }
            effects.append(effect)
        }
    }

    /// An attack-hold-fade effect matching `corners` (one linear rise, a flat top, one linear fall), or `nil`.
    static func effect(corners: [(time: Double, gain: Double)], level: Double, period: Double) -> NativePeriodicEffect?
    {
        var points = corners
        // Drop zero-length steps at the start (a transient's onset) and repeated corners.
        var cleaned: [(time: Double, gain: Double)] = []
        for point in points {
            if let last = cleaned.last, last.time == point.time {
                cleaned[cleaned.count - 1] = point
            } else {
                cleaned.append(point)
            }
        }
        points = cleaned
        guard let first = points.first, let last = points.last, points.count >= 2 else { return nil }
        let peak = points.map(\.gain).max() ?? 0
        guard peak > 0, let firstPeak = points.firstIndex(where: { $0.gain == peak }),
            let lastPeak = points.lastIndex(where: { $0.gain == peak }),
            firstPeak <= 1, lastPeak >= points.count - 2,
            points[firstPeak...lastPeak].allSatisfy({ $0.gain == peak })
        else { return nil }
        let attack = points[firstPeak].time - first.time
        let fade = last.time - points[lastPeak].time
        return NativePeriodicEffect(
            delay: first.time, length: last.time - first.time, period: period, magnitude: peak * level,
            attackLength: attack, attackLevel: attack > 0 ? first.gain * level : peak * level,
            fadeLength: fade, fadeLevel: fade > 0 ? last.gain * level : peak * level)
    }

    /// The summed level of every effect at `time` (what a device summing its effects would play).
    public func level(at time: Double) -> Double {
        Swift.min(effects.reduce(0) { $0 + $1.level(at: time) }, 1)
    }
}
