// Conversion between the Swift mirror and the kernel's `struct ff_effect`.
package import CLinuxInput

extension ForceFeedbackEnvelope {
    init(_ e: ff_envelope) {
        self.init(
            attackLength: e.attack_length, attackLevel: e.attack_level,
            fadeLength: e.fade_length, fadeLevel: e.fade_level)
    }

    var raw: ff_envelope {
        ff_envelope(
            attack_length: attackLength, attack_level: attackLevel,
            fade_length: fadeLength, fade_level: fadeLevel)
    }
}

extension ForceFeedbackCondition {
    init(_ c: ff_condition_effect) {
        self.init(
            rightSaturation: c.right_saturation, leftSaturation: c.left_saturation,
            rightCoefficient: c.right_coeff, leftCoefficient: c.left_coeff,
            deadband: c.deadband, center: c.center)
    }

    var raw: ff_condition_effect {
        ff_condition_effect(
            right_saturation: rightSaturation, left_saturation: leftSaturation,
            right_coeff: rightCoefficient, left_coeff: leftCoefficient,
            deadband: deadband, center: center)
    }
}

/// Why a kernel effect could not be mirrored.
public struct UnsupportedEffectError: Error, Equatable, Sendable, CustomStringConvertible {
    public let typeCode: UInt16
    public var description: String { "unknown force-feedback effect type 0x\(String(typeCode, radix: 16))" }
}

extension ForceFeedbackEffect {
    /// Mirrors a kernel effect (as a uinput pad receives it in `UI_BEGIN_FF_UPLOAD`).
    package init(_ raw: ff_effect) throws(UnsupportedEffectError) {
        var copy = raw
        let kind: ForceFeedbackEffectKind
        switch ForceFeedbackFeature(rawValue: raw.type) {
        case .rumble:
            let r = cli_ff_rumble(&copy).pointee
            kind = .rumble(strong: r.strong_magnitude, weak: r.weak_magnitude)
        case .periodic:
            let p = cli_ff_periodic(&copy).pointee
            // An unknown waveform code is kept as `.custom` rather than rejected: the kernel validates it.
            let waveform = ForceFeedbackFeature(rawValue: p.waveform) ?? .custom
            kind = .periodic(
                waveform: waveform, period: p.period, magnitude: p.magnitude, offset: p.offset,
                phase: p.phase, envelope: ForceFeedbackEnvelope(p.envelope))
        case .constant:
            let c = cli_ff_constant(&copy).pointee
            kind = .constant(level: c.level, envelope: ForceFeedbackEnvelope(c.envelope))
        case .ramp:
            let r = cli_ff_ramp(&copy).pointee
            kind = .ramp(startLevel: r.start_level, endLevel: r.end_level, envelope: ForceFeedbackEnvelope(r.envelope))
        case .some(let type) where [.spring, .friction, .damper, .inertia].contains(type):
            let axes = [
                ForceFeedbackCondition(cli_ff_condition(&copy, 0).pointee),
                ForceFeedbackCondition(cli_ff_condition(&copy, 1).pointee),
            ]
            kind = .condition(type: type, axes: axes)
        default:
            throw UnsupportedEffectError(typeCode: raw.type)
        }
        self.init(
            id: raw.id, kind: kind, direction: raw.direction,
            triggerButton: raw.trigger.button, triggerInterval: raw.trigger.interval,
            replayLength: raw.replay.length, replayDelay: raw.replay.delay)
    }

    /// The kernel struct for `EVIOCSFF`.
    package var raw: ff_effect {
        var e = ff_effect()
        e.type = kind.type.rawValue
        e.id = id
        e.direction = direction
        e.trigger = ff_trigger(button: triggerButton, interval: triggerInterval)
        e.replay = ff_replay(length: replayLength, delay: replayDelay)
        switch kind {
        case .rumble(let strong, let weak):
            cli_ff_rumble(&e).pointee = ff_rumble_effect(strong_magnitude: strong, weak_magnitude: weak)
        case .periodic(let waveform, let period, let magnitude, let offset, let phase, let envelope):
            var p = ff_periodic_effect()
            p.waveform = waveform.rawValue
            p.period = period
            p.magnitude = magnitude
            p.offset = offset
            p.phase = phase
            p.envelope = envelope.raw
            cli_ff_periodic(&e).pointee = p
        case .constant(let level, let envelope):
            cli_ff_constant(&e).pointee = ff_constant_effect(level: level, envelope: envelope.raw)
        case .ramp(let start, let end, let envelope):
            cli_ff_ramp(&e).pointee = ff_ramp_effect(start_level: start, end_level: end, envelope: envelope.raw)
        case .condition(_, let axes):
            for (index, axis) in axes.prefix(2).enumerated() {
                cli_ff_condition(&e, Int32(index)).pointee = axis.raw
            }
        }
        return e
    }
}
