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

    /// The delay and length as the kernel's `ff_replay` fields take them: clamped to `maximumMilliseconds`. An
    /// effect of a program is in pattern time (its delay from the pattern's start); the stream sends each one from
    /// its start with no delay, cut into pieces no longer than the maximum.
    public var delayMilliseconds: UInt16 { Self.milliseconds(delay) }
    public var lengthMilliseconds: UInt16 { Self.milliseconds(length) }
    public var periodMilliseconds: UInt16 { Swift.max(Self.milliseconds(period), 1) }
    public var attackLengthMilliseconds: UInt16 { Self.milliseconds(attackLength) }
    public var fadeLengthMilliseconds: UInt16 { Self.milliseconds(fadeLength) }
    public var magnitudeUnits: Int16 { Int16(Self.units(magnitude)) }
    public var attackLevelUnits: UInt16 { UInt16(Self.units(attackLevel)) }
    public var fadeLevelUnits: UInt16 { UInt16(Self.units(fadeLevel)) }

    /// The longest time a device is sent, in milliseconds: the kernel's input.h leaves values past 0x7fff
    /// unspecified, and hid-pidff sends 0xffff as the PID's "infinite" (a longer effect would never stop).
    public static let maximumMilliseconds: UInt16 = 0x7fff
    /// The longest effect, in seconds (32.767 s): a longer one is played as pieces one after the other.
    public static let maximumLength = Double(maximumMilliseconds) / 1000

    static func milliseconds(_ seconds: Double) -> UInt16 {
        guard !seconds.isNaN else { return 0 }
        return UInt16(Swift.min(Swift.max((seconds * 1000).rounded(), 0), Double(maximumMilliseconds)))
    }

    static func units(_ level: Double) -> Int {
        Int((PureMath.unitClamped(level) * fullScale).rounded())
    }

    /// The attack and fade around `magnitude`.
    public var envelope: AttackFadeEnvelope<Double> {
        AttackFadeEnvelope(
            attackLength: attackLength, attackLevel: attackLevel, fadeLength: fadeLength, fadeLevel: fadeLevel)
    }

    /// Changes of magnitude and period while the effect plays, in time order (times from the program start):
    /// an event whose controls change under it, or whose shape an attack-hold-fade envelope cannot express, is
    /// one effect without an envelope whose level follows the pattern by updates. Empty for an exact effect.
    public var updates: [NativePeriodicUpdate] = []

    /// The effect's level at `time` (seconds from the program start), per the kernel's envelope rule and its
    /// updates.
    public func level(at time: Double) -> Double {
        let local = time - delay
        guard local >= 0, local < length else { return 0 }
        let current = updates.last { $0.time <= time }?.magnitude ?? magnitude
        return envelope.level(of: current, elapsed: local, remaining: length - local)
    }

    /// The period at `time` (seconds from the program start), after the updates made by then.
    public func period(at time: Double) -> Double {
        updates.last { $0.time <= time }?.period ?? period
    }

    /// The part of the effect from `from` to `to` (seconds from its own start, clamped to its length), played at
    /// `rate` (pattern seconds per second): an effect starting at once (no delay) whose envelope and updates
    /// continue where the original's were at `from` and stop at `to`, with every time divided by `rate`. What a
    /// player resumed or sought into the middle of an event, stopped before its end, or playing at another rate
    /// sends. Nil when nothing of it is left.
    public func section(from: Double, to: Double, rate: Double = 1) -> NativePeriodicEffect? {
        let start = Swift.max(from, 0)
        let end = Swift.min(to, length)
        guard end > start, rate > 0, rate.isFinite else { return nil }
        let before = updates.last { $0.time - delay <= start }
        let held = before?.magnitude ?? magnitude
        let fadeStart = length - fadeLength
        let levelAt = { (local: Double) in envelope.level(of: held, elapsed: local, remaining: length - local) }
        var cut = self
        cut.delay = 0
        cut.length = (end - start) / rate
        cut.period = before?.period ?? period
        cut.magnitude = start > fadeStart && fadeLength > 0 ? levelAt(start) : held
        if start < attackLength {
            cut.attackLength = (attackLength - start) / rate
            cut.attackLevel = levelAt(start)
        } else {
            cut.attackLength = 0
            cut.attackLevel = cut.magnitude
        }
        if fadeLength > 0, end > fadeStart {
            cut.fadeLength = (end - Swift.max(start, fadeStart)) / rate
            // The envelope's own end level where the section runs to the effect's end (at its last instant the
            // kernel's rule has nothing left to fade, and gives the magnitude).
            cut.fadeLevel = end < length ? levelAt(end) : fadeLevel
        } else {
            cut.fadeLength = 0
            cut.fadeLevel = cut.magnitude
        }
        cut.updates = updates.compactMap { update in
            let local = update.time - delay
            guard local > start, local < end else { return nil }
            return NativePeriodicUpdate(
                time: (local - start) / rate, magnitude: update.magnitude, period: update.period)
        }
        return cut
    }
}

/// A change of a playing periodic effect: its magnitude and period from `time` on (an `EVIOCSFF` of the same
/// effect, which the driver sends as one parameter report while the effect plays).
public struct NativePeriodicUpdate: Sendable, Hashable {
    /// Seconds from the program start.
    public var time: Double
    public var magnitude: Double
    public var period: Double

    public init(time: Double, magnitude: Double, period: Double) {
        self.time = time
        self.magnitude = magnitude
        self.period = period
    }
}

/// A pattern compiled for a device with native `FF_PERIODIC`: one effect per haptic event that sounds (the motor
/// renderers' limit, `PatternRenderer.maximumSoundingEvents` at once, leaves the same events out here). Where the
/// kernel's replay and envelope fields express the event exactly (to the millisecond), that effect is all; an
/// event with intensity or sharpness controls changing under it, or with a shape an attack-hold-fade envelope
/// cannot express, is listed in `inexactEvents` and its effect follows the pattern by updates (`updates`) that
/// the profile's write-budgeted planner places, as it places motor levels.
public struct NativePeriodicProgram: Sendable, Hashable {
    /// In event order.
    public var effects: [NativePeriodicEffect]
    /// Indexes into `pattern.events` of the haptic events whose effects follow them by updates.
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
        let knots = controls.knots.sorted()
        effects = []
        inexactEvents = []
        // The voices the motor renderers play (`SoundingVoices`: at most `PatternRenderer.maximumSoundingEvents`
        // at once), so that every kind of device plays the same events, and an event is planned only if it sounds.
        let voices = pattern.events.enumerated().compactMap { index, event in
            EventVoice(event: event, controls: controls, pulse: profile.transientPulse).map { (index, $0) }
        }
        for (index, voice) in SoundingVoices.admittedIndices(voices.map(\.1)).map({ voices[$0] }) {
            let start = voice.start
            let end = voice.end
            let intensityControl = controls.intensity.value(at: start, piece: start)
            let sharpnessControl = controls.sharpness.value(at: start, piece: start)
            let firstKnotAfterStart = knots.partitionPoint { $0 > start }
            let steady =
                (firstKnotAfterStart == knots.endIndex || knots[firstKnotAfterStart] >= end)
                && controls.intensity.value(at: end, piece: end) == intensityControl
                && controls.sharpness.value(at: end, piece: end) == sharpnessControl
            let level = Swift.min(Swift.max(voice.intensity * intensityControl, 0), 1) * profile.gain
            if steady,
                let effect = Self.effect(
                    corners: voice.corners, level: level,
                    period: 1 / Self.frequency(sharpness: voice.sharpness + sharpnessControl))
            {
                effects.append(effect)
                continue
            }
            inexactEvents.append(index)
            effects.append(
                Self.followedEffect(voice: voice, controls: controls, sortedKnots: knots, profile: profile))
        }
    }

    /// An effect without an envelope that follows `voice` by updates, placed by the profile's write-budgeted
    /// planner (`DeviceCommandPlanner`, the one the engine plans motor levels with): the event's level over time
    /// (its envelope under the intensity controls, the pattern's other events left out) is planned as one motor; a
    /// command at the event's start is the effect's level (silence without one) and every other command an update
    /// at its time. Each update's period is the sharpness in the middle of its first `interval`; where the period
    /// moves by a millisecond while the level holds, an update at the level held carries it, at most one per
    /// `interval`. `sortedKnots` are `controls.knots` in ascending order.
    static func followedEffect(
        voice: EventVoice, controls: ControlSet, sortedKnots: [Double], profile: RenderProfile
    ) -> NativePeriodicEffect {
        let envelope = PatternRenderer(profile: profile).intensityEnvelope(
            of: voice, controls: controls, sortedKnots: sortedKnots)
        let interval = Swift.max(profile.minimumUpdateInterval, 0.001)
        func period(from time: Double) -> Double {
            let middle = Swift.min(time + interval / 2, (time + voice.end) / 2)
            let sharpness = controls.sharpness.value(at: middle, piece: middle)
            return 1 / frequency(sharpness: Swift.min(Swift.max(voice.sharpness + sharpness, 0), 1))
        }
        let levels = DeviceCommandPlanner(profile: profile).commands(for: envelope)
            .filter { $0.time < voice.end }
            .map { (time: Swift.max($0.time, voice.start), magnitude: $0.levels.strong) }
        // The effect starts at the event's start at the level the planner sends then; a first command later than
        // that (the event silenced by its controls for a while, or an attack from 0) is an update at its time,
        // and the effect is silent until it.
        let opening = levels.first.flatMap { $0.time <= voice.start ? $0.magnitude : nil }
        let first = opening ?? 0
        var effect = NativePeriodicEffect(
            delay: voice.start, length: voice.end - voice.start, period: period(from: voice.start), magnitude: first,
            attackLength: 0, attackLevel: first, fadeLength: 0, fadeLevel: first)
        var sentPeriod = NativePeriodicEffect.milliseconds(effect.period)
        var next = opening == nil ? 0 : 1
        // The commands at or before `time`: `levels[..<reached]`.
        var reached = 0
        var time = voice.start
        // Walk the event by intervals: the planner's commands in each, or a period change where it has none.
        while time < voice.end {
            let limit = time + interval
            while reached < levels.count, levels[reached].time <= time { reached += 1 }
            var held = reached > 0 ? levels[reached - 1].magnitude : first
            var moved = false
            while next < levels.count, levels[next].time < limit {
                let update = NativePeriodicUpdate(
                    time: levels[next].time, magnitude: levels[next].magnitude, period: period(from: levels[next].time))
                effect.updates.append(update)
                sentPeriod = NativePeriodicEffect.milliseconds(update.period)
                held = update.magnitude
                moved = true
                next += 1
            }
            let now = period(from: time)
            if !moved, time > voice.start, NativePeriodicEffect.milliseconds(now) != sentPeriod {
                effect.updates.append(NativePeriodicUpdate(time: time, magnitude: held, period: now))
                sentPeriod = NativePeriodicEffect.milliseconds(now)
            }
            time = limit
        }
        return effect
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
