// The PID joystick running its effects: fed the record (the decoded PID reports with their arrival times), it
// says what force the device puts out at any time, as a PID device runs its effect blocks by itself once the
// host has set them up and started them. Pure.
//
// What the model does (the HID PID specification's effect parameters; a real device's firmware may differ,
// docs/emulation.md lists where):
// - An Effect Operation start plays the block `loopCount` times back to back (0 counts as once), after its start
//   delay (taken once, before the first play); each play lasts `duration` ms, 0xffff until stopped, 0 nothing.
//   A start while playing restarts it; start solo stops every other block first.
// - Within a play the envelope ramps the level from the attack level to the magnitude over the attack time, and
//   from the magnitude to the fade level over the last fade time ms (none for an effect that plays until
//   stopped). Periodic: offset + magnitude after the envelope × the waveform at (time / period + phase).
// - Levels are the kernel's -0x8000...0x7fff; the force is the sum over the playing blocks of level / 0x7fff ×
//   the block's gain × the device gain, clipped to -1...1. The magnitude is the same sum of the enveloped
//   magnitudes' absolute values (no waveform, no offset), clipped to 1: what a bench compares with the
//   intended vibration strength.
// - Device Control: disable actuators silences the output (effects keep their clocks); stop all stops every
//   block; reset stops and frees them all; pause silences the output and stops every block's clock until
//   continue. Parameters changed while a block plays take effect at once, its clock going on; a block whose play
//   ran its length is stopped, and new parameters (a longer duration) do not bring it back.
import HapticRendering

/// One effect block as the device holds it.
package struct PIDEffectBlock: Sendable, Hashable {
    package var type: PIDEffectType?
    package var duration = 0xffff
    package var startDelay = 0
    package var gain = 1.0
    package var magnitude = 0
    package var offset = 0
    package var phase = 0
    package var period = 0
    package var attackLevel = 0
    package var attackTime = 0
    package var fadeLevel = 0
    package var fadeTime = 0
    /// When the running play began (seconds on `CLOCK_MONOTONIC`, moved on by pauses); nil when stopped.
    package var startedAt: Double?
    package var plays = 1

    /// Plays until stopped.
    package var isEndless: Bool { duration == 0xffff }

    /// Takes the parameters a Set Effect, Set Envelope, Set Periodic or Set Constant report carries.
    mutating func set(_ report: PIDReport) {
        switch report.kind {
        case .setEffect:
            type = report.effectType ?? type
            duration = report.duration ?? duration
            startDelay = report.startDelay ?? startDelay
            gain = report.gain ?? gain
        case .setEnvelope:
            (attackLevel, attackTime) = (report.attackLevel ?? 0, report.attackTime ?? 0)
            (fadeLevel, fadeTime) = (report.fadeLevel ?? 0, report.fadeTime ?? 0)
        case .setPeriodic:
            (magnitude, offset) = (report.magnitude ?? 0, report.offset ?? 0)
            (phase, period) = (report.phase ?? 0, report.period ?? 0)
        case .setConstant:
            magnitude = report.magnitude ?? 0
        default:
            break
        }
    }

    /// When it stops by itself; nil while it plays until stopped or is stopped.
    package var endsAt: Double? {
        guard let startedAt, !isEndless else { return nil }
        return startedAt + Double(startDelay + duration * plays) / 1000
    }

    /// The enveloped magnitude (0...0x7fff, unsigned) and the signed level, in the kernel's units, at `time`;
    /// nil when the block puts out nothing then (stopped, delayed, ended).
    package func output(at time: Double) -> (magnitude: Double, level: Double)? {
        guard let startedAt, let type else { return nil }
        let elapsed = (time - startedAt) * 1000 - Double(startDelay)
        guard elapsed >= 0, duration > 0 else { return nil }
        let length = Double(duration)
        if !isEndless, elapsed >= length * Double(plays) { return nil }
        let local = isEndless ? elapsed : elapsed.truncatingRemainder(dividingBy: length)
        let full = Double(abs(magnitude))
        var envelope = full
        if attackTime > 0, local < Double(attackTime) {
            envelope = Double(attackLevel) + (full - Double(attackLevel)) * local / Double(attackTime)
        } else if !isEndless, fadeTime > 0, local > length - Double(fadeTime) {
            envelope = full + (Double(fadeLevel) - full) * (local - (length - Double(fadeTime))) / Double(fadeTime)
        }
        let sign: Double = magnitude < 0 ? -1 : 1
        guard type.isPeriodic else { return (envelope, sign * envelope) }
        let cycles = (period > 0 ? local / Double(period) : 0) + Double(phase) / 0x10000
        let position = cycles - cycles.rounded(.down)
        return (envelope, Double(offset) + sign * envelope * Self.wave(type, at: position))
    }

    /// The waveform, -1...1, at a position 0..<1 in its cycle: sine from 0 upwards; square +1 for the first
    /// half; triangle from -1 up to +1 at half a cycle and back; saw up from -1 to +1, saw down from +1 to -1.
    package static func wave(_ type: PIDEffectType, at position: Double) -> Double {
        switch type {
        case .constant: 1
        case .sine: PureMath.sin(2 * Double.pi * position)
        case .square: position < 0.5 ? 1 : -1
        case .triangle: position < 0.5 ? -1 + 4 * position : 3 - 4 * position
        case .sawUp: -1 + 2 * position
        case .sawDown: 1 - 2 * position
        }
    }
}

/// What the device holds and does after a report.
package struct PIDDeviceState: Sendable, Hashable {
    package var blocks: [Int: PIDEffectBlock] = [:]
    package var deviceGain = 1.0
    package var actuatorsEnabled = true
    /// Since when the device is paused.
    package var pausedAt: Double?

    package init() {}

    /// Applies a report that arrived at `time`.
    package mutating func apply(_ report: PIDReport, at time: Double) {
        let index = report.blockIndex ?? 0
        switch report.kind {
        case .createNewEffect:
            guard report.status == .success, report.blockIndex != nil else { return }
            blocks[index] = PIDEffectBlock(type: report.effectType)
        case .setEffect, .setEnvelope, .setPeriodic, .setConstant:
            // A parameter report for a block the device never loaded sets it up all the same.
            var block = blocks[index] ?? PIDEffectBlock()
            // A play that ran its length is over: new parameters (a longer duration) do not bring it back.
            if let end = block.endsAt, end <= time { block.startedAt = nil }
            block.set(report)
            blocks[index] = block
        case .effectOperation:
            switch report.operation {
            case .start?, .startSolo?:
                if report.operation == .startSolo { stopAll() }
                // A pause in progress: the block's clock starts when the device continues.
                blocks[index]?.startedAt = pausedAt ?? time
                blocks[index]?.plays = max(report.loopCount ?? 1, 1)
            case .stop?: blocks[index]?.startedAt = nil
            case nil: break
            }
        case .blockFree:
            blocks[index] = nil
        case .deviceGain:
            deviceGain = report.gain ?? deviceGain
        case .deviceControl:
            switch report.control {
            case .enableActuators?: actuatorsEnabled = true
            case .disableActuators?: actuatorsEnabled = false
            case .stopAllEffects?: stopAll()
            case .reset?:
                blocks.removeAll()
                pausedAt = nil
            case .pause?: pausedAt = pausedAt ?? time
            case .continue?:
                if let pausedAt {
                    for index in blocks.keys { blocks[index]?.startedAt? += time - pausedAt }
                }
                pausedAt = nil
            case nil: break
            }
        }
    }

    private mutating func stopAll() {
        for index in blocks.keys { blocks[index]?.startedAt = nil }
    }

    /// The force (-1...1) and magnitude (0...1) the device puts out at `time`, with no report since.
    package func output(at time: Double) -> PIDForceSample {
        guard actuatorsEnabled, pausedAt == nil else { return PIDForceSample(time: time, force: 0, magnitude: 0) }
        var force = 0.0
        var magnitude = 0.0
        for block in blocks.values {
            guard let output = block.output(at: time) else { continue }
            let scale = block.gain * deviceGain / 0x7fff
            force += output.level * scale
            magnitude += output.magnitude * scale
        }
        return PIDForceSample(time: time, force: min(max(force, -1), 1), magnitude: min(magnitude, 1))
    }
}

/// The device's output at one time.
package struct PIDForceSample: Sendable, Hashable {
    /// Seconds on `CLOCK_MONOTONIC`.
    package var time: Double
    /// The signed force, -1...1 of full scale.
    package var force: Double
    /// The summed enveloped magnitudes of the playing effects after the gains, 0...1.
    package var magnitude: Double
}

/// The PID joystick's effects run over time, from its record.
package struct PIDPlayback: Sendable {
    /// The device's state after each PID report, in arrival order (time in seconds).
    package let states: [(time: Double, state: PIDDeviceState)]

    /// Reads the records' decoded PID reports (`PadRecord.pid`) in order; other records are skipped.
    package init(records: [PadRecord]) {
        var state = PIDDeviceState()
        var states: [(time: Double, state: PIDDeviceState)] = []
        for record in records.sorted(by: { $0.time < $1.time }) {
            guard let report = record.pid else { continue }
            state.apply(report, at: record.time.seconds)
            states.append((record.time.seconds, state))
        }
        self.states = states
    }

    /// The state in effect at `time`: after the last report that arrived by then.
    package func state(at time: Double) -> PIDDeviceState {
        states.last { $0.time <= time }?.state ?? PIDDeviceState()
    }

    package func output(at time: Double) -> PIDForceSample { state(at: time).output(at: time) }

    /// When the last report arrived, or when the last effect started by then ends by itself, whichever is
    /// later (an effect playing until stopped ends nothing); nil without PID reports.
    package var end: Double? {
        guard let last = states.last else { return nil }
        return last.state.blocks.values.compactMap(\.endsAt).reduce(last.time, max)
    }

    /// The output sampled every `step` seconds from `start` (default: the first PID report) through `end`
    /// (default: `end` above).
    package func timeline(from start: Double? = nil, through end: Double? = nil, step: Double = 0.001)
        -> [PIDForceSample]
    {
        guard let first = start ?? states.first?.time, let last = end ?? self.end, step > 0, last >= first else {
            return []
        }
        // A hair over, so that an end a whole number of steps away is sampled despite rounding.
        let count = Int(((last - first) / step + 1e-6).rounded(.down))
        // One pass: the state in effect moves forward with the samples.
        var next = 0
        var state = PIDDeviceState()
        return (0...count).map { index in
            let time = first + Double(index) * step
            while next < states.count, states[next].time <= time {
                state = states[next].state
                next += 1
            }
            return state.output(at: time)
        }
    }

    /// The force and magnitude timeline of a PID joystick's record, sampled every `step` seconds (1 ms by
    /// default) from the first PID report (or `start`) to the end of the last effect or report (or `end`).
    package static func timeline(
        of records: [PadRecord], from start: Double? = nil, through end: Double? = nil, step: Double = 0.001
    ) -> [PIDForceSample] {
        PIDPlayback(records: records).timeline(from: start, through: end, step: step)
    }
}
