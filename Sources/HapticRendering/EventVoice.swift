import AHAP

/// One haptic event turned into an envelope over pattern time: a piecewise-linear gain 0...1 that multiplies
/// the event's (controlled) intensity. Audio events never become voices.
struct EventVoice: Sendable {
    let envelope: GainEnvelope
    /// `HapticIntensity` of the event, clamped.
    let intensity: Double
    /// `HapticSharpness` of the event, clamped.
    let sharpness: Double

    /// The envelope's corners in pattern time, sorted; two corners at one time make a step.
    var corners: [(time: Double, gain: Double)] { envelope.corners }
    var start: Double { envelope.start }
    var end: Double { envelope.end }

    /// The voice of `event`, or `nil` for audio events, events that produce nothing, and events whose time is
    /// outside `HapticPattern.isWithinTimeBound` (the reader refuses those; a pattern built in code may hold
    /// one, and it is skipped rather than rendered at a time too coarse to hold its pulse). `pulseLength` gives a
    /// transient's flat top in seconds for the event's sharpness at its start (control included).
    init?(event: HapticEvent, controls: ControlSet, pulseLength: (_ sharpness: Double) -> Double) {
        guard event.isHaptic, HapticPattern.isWithinTimeBound(event.relativeTime) else { return nil }
        let start = event.relativeTime
        let adjuster = { (base: Double, schedule: ControlSchedule, at: Double) -> Double in
            EnvelopeTiming.seconds(forAdjuster: base + schedule.value(at: at, piece: at))
        }
        let onsetSharpness = Swift.min(
            Swift.max(event.sharpness + controls.sharpness.value(at: start, piece: start), 0), 1)
        let pulse = Swift.max(pulseLength(onsetSharpness), 0)
        switch event.type {
        case .hapticTransient:
            let decay = adjuster(event.decayTime, controls.decay, start)
            var corners = [(time: start, gain: 1.0), (start + pulse, 1)]
            if decay > 0 { corners.append((start + pulse + decay, 0)) }
            envelope = GainEnvelope(corners: corners)
        default:
            let duration = event.effectiveDuration
            guard duration > 0 else { return nil }
            // Not sustained: the decay lasts at least one transient pulse, so that a default, zero DecayTime
            // still leaves something a motor can play.
            let decay =
                event.isSustained ? nil : Swift.max(adjuster(event.decayTime, controls.decay, start), pulse)
            envelope = .continuous(
                start: start, duration: duration, attack: adjuster(event.attackTime, controls.attack, start),
                decay: decay, release: adjuster(event.releaseTime, controls.release, start + duration))
        }
        self.intensity = event.intensity
        self.sharpness = event.sharpness
    }

    /// The voice of `event` with a transient pulse of fixed length (the motor renderers').
    init?(event: HapticEvent, controls: ControlSet, pulse: TransientPulse) {
        self.init(event: event, controls: controls, pulseLength: { _ in pulse.length })
    }

    /// The envelope gain at `time`, using the linear piece that contains `piece`.
    func gain(at time: Double, piece: Double) -> Double { envelope.gain(at: time, piece: piece) }
}
