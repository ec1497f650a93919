// One seat of the soak: a virtual pad, the engine bound to it, and the players a game runs on it. The soak's loop
// drives the seat (starts plays, unplugs and replugs its pad); the engine's handlers only record what happened.
// No engine call is made while the seat's lock is held: a cancel calls its completion handler on the caller's
// thread, and that handler takes the lock.
import AHAP
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Synchronization
@_spi(Internals) import LinuxSystem

final class SoakSeat: Sendable {
    /// One of the seat's players and the play it is in.
    struct Slot {
        var player: (any HapticAdvancedPatternPlayer)?
        /// Which pattern `player` plays, and how many resets the seat had seen when it was made.
        var pattern = 0
        var madeAtReset = 0
        /// The play in progress (nil: idle); completions of older plays are ignored.
        var play: Int?
        /// When the next play may start (engine time), and when to cancel the current one, if it is to be.
        var dueAt = 0.0
        var cancelAt: Double?
    }

    /// What the seat counts and what went wrong, for the samples and the verdict.
    struct Counters {
        var plays = 0
        var cancels = 0
        /// Plays cut off by an unplug (their completion got `noDevice`).
        var interrupted = 0
        var unplugs = 0
        /// `stoppedHandler(.gameControllerDisconnect)` and `resetHandler` calls.
        var disconnects = 0
        var resets = 0
        /// Calls refused with `playerInvalidated`: expected for a play racing a reset, a bug otherwise.
        var invalidations = 0
        var failures: [String] = []
    }

    struct State {
        var pad: VirtualPad?
        var slots: [Slot]
        var random: SeededGenerator
        var nextPlay = 0
        var counters = Counters()
        /// Resets the loop has acted on (made new players for); behind `counters.resets` until it does.
        var resetsHandled = 0
        /// From our unplug until the loop has acted on the reset that follows the replug: no plays meanwhile,
        /// as a game waits for the reset handler before it plays again.
        var awaitingReset = false
        /// When the pad was re-created, while its reset has not come.
        var repluggedAt: Double?
        /// Engine time of the last sign of life: a completed play, the start, a reset.
        var lastProgress = 0.0
        /// Players refused as invalidated, with the reset count they were made at: a bug when no reset came since.
        var suspects: [(slot: Int, madeAtReset: Int)] = []
        var stopping = false
    }

    let index: Int
    let configuration: VirtualPadConfiguration
    let engine: HapticEngine
    let patterns: [SoakPattern]
    private let state: Mutex<State>

    init(index: Int, players: Int, patterns: [SoakPattern], seed: UInt64) throws {
        self.index = index
        self.patterns = patterns
        // A name of its own gives each pad its own stable id: every engine follows its own pad, and the same name
        // brings the same identity back on replug.
        configuration = VirtualPadConfiguration(name: "Haptics Soak Pad \(index + 1)", keepsRecords: false)
        let pad = try VirtualPadSuite.makePad(configuration)
        var options = HapticEngineOptions()
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        engine = HapticEngine(output: .device(.node(pad.eventNode)), options: options, logger: VirtualPadSuite.logger())
        state = Mutex(
            State(
                pad: pad, slots: Array(repeating: Slot(), count: players),
                random: SeededGenerator(seed: seed &+ UInt64(index) &* 0x9E37_79B9)))
        engine.stoppedHandler = { [weak self] reason in self?.engineStopped(reason) }
        engine.resetHandler = { [weak self] in self?.state.withLock { $0.counters.resets += 1 } }
        do { try engine.start() } catch {
            pad.destroy()
            throw TestFailure(reason: "starting the engine on \(pad.eventNode): \(error)")
        }
        let now = engine.currentTime
        state.withLock { $0.lastProgress = now }
    }

    var counters: Counters { state.withLock { $0.counters } }
    var pad: VirtualPad? { state.withLock { $0.pad } }

    /// Plugged in, recovered and running: what a sample waits for.
    var isSettled: Bool {
        let settled = state.withLock { $0.pad != nil && !$0.awaitingReset }
        return settled && engine.isRunning
    }

    /// Plugged in and not waiting for its reset: a pad the unplugger may take.
    var isPlugged: Bool { state.withLock { $0.pad != nil && !$0.awaitingReset } }

    private func engineStopped(_ reason: HapticEngineStoppedReason) {
        state.withLock { state in
            if reason == .gameControllerDisconnect {
                state.counters.disconnects += 1
            } else if !state.stopping {
                state.counters.failures.append("pad \(index + 1): the engine stopped: \(reason.rawValue)")
            }
        }
    }

    // MARK: Unplug and replug

    func unplug() {
        let pad = state.withLock { state -> VirtualPad? in
            state.counters.unplugs += 1
            state.awaitingReset = true
            defer { state.pad = nil }
            return state.pad
        }
        pad?.destroy()
    }

    /// The same pad again: same name, so the same identity.
    func replug(now: Double) throws {
        let pad = try VirtualPadSuite.makePad(configuration)
        state.withLock { state in
            state.pad = pad
            state.repluggedAt = now
        }
    }

    // MARK: The loop's step

    /// Acts on a reset (new players for every slot), cancels what is due, starts the plays that are due, and
    /// checks for a stall or a recovery that never came.
    func step(now: Double, hangGuard: Double) {
        if state.withLock({ $0.counters.resets > $0.resetsHandled }) { recreatePlayers(now: now) }
        let (cancels, starts) = state.withLock { state -> ([Int], [Int]) in
            guard state.pad != nil, !state.awaitingReset, !state.stopping else { return ([], []) }
            let cancels = state.slots.indices.filter { state.slots[$0].cancelAt.map { $0 <= now } ?? false }
            for slot in cancels { state.slots[slot].cancelAt = nil }
            let starts = state.slots.indices.filter { state.slots[$0].play == nil && state.slots[$0].dueAt <= now }
            return (cancels, starts)
        }
        for slot in cancels { cancel(slot) }
        for slot in starts { startPlay(slot, now: now) }
        checkProgress(now: now, hangGuard: hangGuard)
    }

    /// What a game does in its reset handler: a new player for every slot, each made before the old one is let go.
    private func recreatePlayers(now: Double) {
        let (resets, slots) = state.withLock { ($0.counters.resets, $0.slots.count) }
        for slot in 0..<slots {
            let pattern = state.withLock { Int.random(in: 0..<patterns.count, using: &$0.random) }
            let fresh: any HapticAdvancedPatternPlayer
            do { fresh = try engine.makeAdvancedPlayer(with: patterns[pattern].pattern) } catch {
                fail("making a player after the reset: \(error)")
                continue
            }
            let old = state.withLock { state -> (any HapticAdvancedPatternPlayer)? in
                defer { state.slots[slot] = Slot(player: fresh, pattern: pattern, madeAtReset: resets, dueAt: now) }
                return state.slots[slot].player
            }
            withExtendedLifetime(old) {}
        }
        state.withLock { state in
            state.resetsHandled = resets
            state.awaitingReset = false
            state.repluggedAt = nil
            state.lastProgress = now
        }
    }

    private func cancel(_ slot: Int) {
        guard let player = state.withLock({ $0.slots[slot].player }) else { return }
        do { try player.cancel() } catch { refused(error, slot: slot) }
    }

    private func fail(_ reason: String) {
        state.withLock { $0.counters.failures.append("pad \(index + 1): \(reason)") }
    }

    private func checkProgress(now: Double, hangGuard: Double) {
        state.withLock { state in
            guard !state.stopping else { return }
            if let replugged = state.repluggedAt, now - replugged > hangGuard {
                state.counters.failures.append(
                    "pad \(index + 1): no reset \(Int(now - replugged)) s after it was plugged in again")
                state.repluggedAt = nil
            }
            if state.pad != nil, !state.awaitingReset, now - state.lastProgress > hangGuard {
                state.counters.failures.append(
                    "pad \(index + 1): playback stalled: no play completed for \(Int(now - state.lastProgress)) s")
                state.lastProgress = now
            }
        }
    }
}

// MARK: - Plays

extension SoakSeat {
    /// How one play goes: the same player again or a new one, prepared or not, looped and stopped, or cancelled.
    struct PlayChoice {
        var reuses: Bool
        var pattern: Int
        var prepares: Bool
        /// Loop the pattern and stop it after this many seconds.
        var loopsFor: Double?
        /// Cancel after this many seconds.
        var cancelsAfter: Double?
    }

    private func choosePlay(_ state: inout State, slot: Int) -> PlayChoice {
        let reuses = state.slots[slot].player != nil && Bool.random(using: &state.random)
        let pattern = reuses ? state.slots[slot].pattern : Int.random(in: 0..<patterns.count, using: &state.random)
        let shape = Int.random(in: 0..<10, using: &state.random)
        return PlayChoice(
            reuses: reuses, pattern: pattern, prepares: Bool.random(using: &state.random),
            loopsFor: shape == 0 ? Double.random(in: 0.5...2, using: &state.random) : nil,
            cancelsAfter: shape == 1 ? Double.random(in: 0.05...0.3, using: &state.random) : nil)
    }

    func startPlay(_ slot: Int, now: Double) {
        let (choice, play, current, resets) = state.withLock { state in
            defer { state.nextPlay += 1 }
            return (
                choosePlay(&state, slot: slot), state.nextPlay, state.slots[slot].player, state.counters.resets
            )
        }
        do {
            let player: any HapticAdvancedPatternPlayer
            if choice.reuses, let current {
                player = current
            } else {
                player = try engine.makeAdvancedPlayer(with: patterns[choice.pattern].pattern)
            }
            let old = state.withLock { state -> (any HapticAdvancedPatternPlayer)? in
                defer {
                    if player !== current { state.slots[slot].madeAtReset = resets }
                    state.slots[slot].player = player
                    state.slots[slot].pattern = choice.pattern
                    state.slots[slot].play = play
                    state.slots[slot].cancelAt = choice.cancelsAfter.map { now + $0 }
                }
                return state.slots[slot].player
            }
            withExtendedLifetime(old) {}
            player.completionHandler = { [weak self] error in self?.playEnded(slot: slot, play: play, error) }
            player.loopEnabled = choice.loopsFor != nil
            if choice.prepares { try player.prepare() }
            try player.start(atTime: 0)
            if let span = choice.loopsFor { try player.stop(atTime: now + span) }
        } catch {
            state.withLock { state in
                if state.slots[slot].play == play { state.slots[slot].play = nil }
                state.slots[slot].dueAt = now + 0.1
            }
            refused(error, slot: slot)
        }
    }

    /// A call the engine refused: expected while the pad is away, a failure otherwise (checked once settled, for
    /// an invalidation, as the reset handler may not have run yet when the call was refused).
    private func refused(_ error: any Error, slot: Int) {
        guard let error = error as? HapticEngineError else {
            fail("unexpected error \(error)")
            return
        }
        let dead = state.withLock { state -> (any HapticAdvancedPatternPlayer)? in
            switch error.kind {
            case .playerInvalidated:
                state.counters.invalidations += 1
                state.suspects.append((slot, state.slots[slot].madeAtReset))
                // A dead handle: the slot's next play makes a new player.
                defer { state.slots[slot].player = nil }
                return state.slots[slot].player
            case .noDevice, .notRunning:
                return nil
            default:
                if !state.stopping { state.counters.failures.append("pad \(index + 1): \(error.kind): \(error)") }
                return nil
            }
        }
        withExtendedLifetime(dead) {}
    }

    private func playEnded(slot: Int, play: Int, _ error: HapticEngineError?) {
        state.withLock { state in
            guard state.slots[slot].play == play else { return }
            state.slots[slot].play = nil
            state.slots[slot].cancelAt = nil
            let now = engine.currentTime
            state.slots[slot].dueAt = now + Double.random(in: 0...0.3, using: &state.random)
            switch error?.kind {
            case nil:
                state.counters.plays += 1
                state.lastProgress = now
            case .cancelled?: state.counters.cancels += 1
            case .noDevice?: state.counters.interrupted += 1
            case .notRunning? where state.stopping: break
            case let kind?: state.counters.failures.append("pad \(index + 1): a play ended with \(kind): \(error!)")
            }
        }
    }

    /// Invalidations that no reset explains: called once the seat is settled, so its reset handler has run.
    func checkInvalidations() {
        state.withLock { state in
            for suspect in state.suspects where suspect.madeAtReset == state.counters.resets {
                state.counters.failures.append(
                    "pad \(index + 1): player \(suspect.slot + 1) was invalidated without a reset")
            }
            state.suspects.removeAll()
        }
    }
}

// MARK: - The end

extension SoakSeat {
    /// Stops the engine and lets the players go, then checks the pad: no effect held, motors at 0, no descriptor
    /// on its node, and (the kernel's own view) every slot free for a new client. Destroys the pad.
    func stopAndCheck() async -> [String] {
        let players = state.withLock { state -> [(any HapticAdvancedPatternPlayer)?] in
            state.stopping = true
            defer { for slot in state.slots.indices { state.slots[slot].player = nil } }
            return state.slots.map(\.player)
        }
        engine.stop()
        withExtendedLifetime(players) {}
        guard let pad else { return ["pad \(index + 1) was not plugged in at the end"] }
        defer { pad.destroy() }
        var problems: [String] = []
        // Closing the engine's descriptor makes the kernel stop and erase its effects; the pad's thread records them.
        if let held = await VirtualPadSuite.effectsLeft(on: pad) {
            problems.append("pad \(index + 1) still holds effects \(held) after its engine stopped")
        }
        if !pad.motorOutput(at: PadTimestamp(seconds: monotonicSeconds())).isOff {
            problems.append("pad \(index + 1): the motors run after its engine stopped")
        }
        let open = EngineSuite.descriptors(pointingAt: pad.eventNode)
        if open > 0 { problems.append("pad \(index + 1): \(open) descriptors still open on \(pad.eventNode)") }
        if let refusal = Self.kernelRefusesASlot(on: pad) { problems.append("pad \(index + 1): \(refusal)") }
        if let held = await VirtualPadSuite.effectsLeft(on: pad) {
            problems.append("pad \(index + 1) still holds effects \(held) after the probe's descriptor closed")
        }
        return problems
    }

    /// The kernel's view of the pad's slots: a new client fills every one (the kernel keeps no effect of a closed
    /// descriptor); closing it frees them again. Says what the kernel refused, if it did.
    static func kernelRefusesASlot(on pad: VirtualPad) -> String? {
        let client: RawClient
        do { client = try RawClient(node: pad.eventNode) } catch { return "a new client cannot open the pad: \(error)" }
        defer { client.close() }
        for slot in 0..<pad.configuration.maxEffects {
            do { try client.uploadRumble(strong: 0, weak: 0) } catch {
                return
                    "the kernel refused upload \(slot + 1) of \(pad.configuration.maxEffects) from a new client: \(error)"
            }
        }
        return nil
    }
}
