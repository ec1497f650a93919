// A prepared player's start made ready ahead, so that `start(atTime: 0)` is its pulse's one write with nothing
// before it that can wait: no lock (the playback thread's or the output's), no clock read, no lookup, no
// allocation. Two atomic words stand in for the checks a start makes under the state lock: the engine's
// `StartGate` (running, on this output, haptics on, no reset since) and the player's own `ArmedStart` (its
// prepared pulse still usable: a plain start from its top, no sound to wait for). `EngineState` keeps both true:
// it publishes the gate whenever the engine's phase, output, mute or reset changes, and arms or disarms a
// player's start whenever the player or its prepared pulse changes. A start that finds either closed takes the
// ordinary path, which decides under the lock as before.
import LinuxSystem
import Synchronization

/// The engine-wide condition of an armed start, one word: 0 while the engine may not trigger a prepared pulse
/// (not running, no output, haptics muted); otherwise a token naming the output's opening and the reset
/// generation, so that a start armed for an earlier one never fires.
final class StartGate: Sendable {
    private let word = Atomic<UInt64>(0)

    var token: UInt64 { word.load(ordering: .acquiring) }

    func publish(_ token: UInt64) { word.store(token, ordering: .releasing) }

    /// The token for a running engine on output opening `output` after reset `reset`.
    static func token(output: OutputGeneration, reset: ResetGeneration) -> UInt64 {
        1 << 63 | UInt64(truncatingIfNeeded: output.value & 0x7FFF_FFFF) << 32
            | UInt64(truncatingIfNeeded: reset.value & 0xFFFF_FFFF)
    }
}

/// One player's armed start: its prepared pulse's trigger and the gate token it was armed under.
final class ArmedStart: Sendable {
    struct Armed: Sendable {
        let trigger: any PulseTrigger
        let gate: UInt64
        let effect: PreparedEffect
    }

    enum Outcome {
        /// The pulse went out.
        case fired(PreparedEffect)
        /// The write failed: the start must go the ordinary way.
        case failed(PreparedEffect, OutputFailure)
    }

    private static let disarmed = 0
    private static let ready = 1
    /// A fire in flight, or the arming thread changing what is armed.
    private static let busy = 2

    private let word = Atomic<Int>(ArmedStart.disarmed)
    /// Written only while `word` is `busy` by the thread that made it so, read only while it is `ready` or
    /// `busy` by that thread: not a Swift-checked property, so that a fire pays for no exclusivity check.
    nonisolated(unsafe) private let armed: UnsafeMutablePointer<Armed?>

    init() {
        armed = .allocate(capacity: 1)
        armed.initialize(to: nil)
    }

    deinit {
        armed.deinitialize(count: 1)
        armed.deallocate()
    }

    /// Fires the armed pulse when armed under `gate`; nil (nothing written) when not armed, armed under
    /// another gate, or another thread is firing it right now (that start takes the ordinary path).
    func fire(gate: UInt64) -> Outcome? {
        guard word.compareExchange(expected: Self.ready, desired: Self.busy, ordering: .acquiring).exchanged else {
            return nil
        }
        defer { word.store(Self.ready, ordering: .releasing) }
        // Fields read in place, not the whole value copied: nothing before the write but the trigger's call.
        guard gate != 0, armed.pointee?.gate == gate else { return nil }
        do throws(OutputFailure) {
            try armed.pointee.unsafelyUnwrapped.trigger.fire()
        } catch {
            return .failed(armed.pointee.unsafelyUnwrapped.effect, error)
        }
        return .fired(armed.pointee.unsafelyUnwrapped.effect)
    }

    /// What is armed (read by the arming thread only, under the engine's state lock).
    var current: Armed? {
        guard word.load(ordering: .acquiring) != Self.disarmed else { return nil }
        return armed.pointee
    }

    /// Arms `wanted`, or disarms with nil. Only ever called under the engine's state lock, so one thread at a
    /// time; a fire in flight is one write, waited out. Dropping the trigger it held does no I/O: the output
    /// still holds its pulse until it releases or closes it.
    func arm(_ wanted: Armed?) {
        while true {
            let now = word.load(ordering: .acquiring)
            if now != Self.busy,
                word.compareExchange(expected: now, desired: Self.busy, ordering: .acquiring).exchanged
            {
                break
            }
            Sys.yield()
        }
        armed.pointee = wanted
        word.store(wanted == nil ? Self.disarmed : Self.ready, ordering: .releasing)
    }
}
