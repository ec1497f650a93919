import AHAP

/// One haptic event turned into an envelope over pattern time: a piecewise-linear gain 0...1 that multiplies
/// the event's (controlled) intensity. Audio events never become voices.
struct EventVoice: Sendable {
    /// The envelope's corners in pattern time, sorted; two corners at one time make a step. The envelope is 0
    /// before the first corner and from the last corner on.
    let corners: [(time: Double, gain: Double)]
    /// `HapticIntensity` of the event, clamped.
    let intensity: Double
    /// `HapticSharpness` of the event, clamped.
    let sharpness: Double

    var start: Double { corners.first?.time ?? 0 }
    var end: Double { corners.last?.time ?? 0 }

    /// The voice of `event`, or `nil` for audio events, events that produce nothing, and events whose time is
    /// outside `HapticPattern.isWithinTimeBound` (the reader refuses those; a pattern built in code may hold
    /// one, and it is skipped rather than rendered at a time too coarse to hold its pulse).
    init?(event: HapticEvent, controls: ControlSet, pulse: TransientPulse) {
        guard event.isHaptic, HapticPattern.isWithinTimeBound(event.relativeTime) else { return nil }
        let start = event.relativeTime
        let adjuster = { (base: Double, schedule: ControlSchedule, at: Double) -> Double in
            EnvelopeTiming.seconds(forAdjuster: base + schedule.value(at: at, piece: at))
        }
        var corners: [(time: Double, gain: Double)]
        switch event.type {
        case .hapticTransient:
            let decay = adjuster(event.decayTime, controls.decay, start)
            corners = [(start, 1), (start + pulse.length, 1)]
            if decay > 0 { corners.append((start + pulse.length + decay, 0)) }
        default:
            let duration = event.effectiveDuration
            guard duration > 0 else { return nil }
            let attack = adjuster(event.attackTime, controls.attack, start)
            let end = start + duration
            let release = adjuster(event.releaseTime, controls.release, end)
            // The shape while the event lasts, before any cut at its end: attack then hold (sustained), or
            // attack then a decay to silence (not sustained; the decay lasts at least one transient pulse so
            // that a default, zero DecayTime still leaves something a motor can play).
            var shape: [(time: Double, gain: Double)] = [(start, attack > 0 ? 0 : 1), (start + attack, 1)]
            if event.isSustained {
                shape.append((Swift.max(end, start + attack), 1))
            } else {
                let decay = Swift.max(adjuster(event.decayTime, controls.decay, start), pulse.length)
                shape.append((start + attack + decay, 0))
            }
            corners = Self.cut(shape, at: end)
            let last = corners.last?.gain ?? 0
            if last > 0 {
                if release > 0 { corners.append((end + release, 0)) }
            }
        }
        self.corners = corners
        self.intensity = event.intensity
        self.sharpness = event.sharpness
    }

    /// `shape` up to `end`: corners after it dropped, the level at `end` interpolated.
    private static func cut(_ shape: [(time: Double, gain: Double)], at end: Double) -> [(time: Double, gain: Double)] {
        var result: [(time: Double, gain: Double)] = []
        for (index, corner) in shape.enumerated() {
            if corner.time <= end {
                result.append(corner)
                continue
            }
            if let previous = result.last, index > 0 {
                let span = corner.time - previous.time
                let gain =
                    span > 0
                    ? previous.gain + (corner.gain - previous.gain) * (end - previous.time) / span : corner.gain
                result.append((end, gain))
            }
            break
        }
        if let last = result.last, last.time < end, last.gain > 0 { result.append((end, last.gain)) }
        return result
    }

    /// The envelope gain at `time`, using the linear piece that contains `piece`.
    func gain(at time: Double, piece: Double) -> Double {
        guard let first = corners.first, let last = corners.last, piece >= first.time, piece < last.time else {
            return 0
        }
        for (earlier, later) in zip(corners, corners.dropFirst()) where piece < later.time {
            let span = later.time - earlier.time
            guard span > 0 else { continue }
            return earlier.gain + (later.gain - earlier.gain) * (time - earlier.time) / span
        }
        return 0
    }
}
