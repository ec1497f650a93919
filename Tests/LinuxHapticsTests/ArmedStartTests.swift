// The armed start: a prepared player's `start(atTime: 0)` is its pulse's trigger with nothing before it that can
// wait, and it is armed only while the ordinary path would trigger that pulse too: any change that makes the
// pulse the wrong thing to play (another rate, controls sent since, muted haptics, another output, a reset) sends
// the start through the mix instead.
import AHAP
import Foundation
import HapticRendering
@testable import LinuxHaptics
import LinuxHapticsTesting
@_spi(Internals) import LinuxSystem
import Testing

@Suite struct ArmedStartTests {
    private func preparedTap(_ rig: Rig) throws -> any HapticAdvancedPatternPlayer {
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        #expect(try player.prepare())
        return player
    }

    private func triggers(_ rig: Rig) -> Int {
        rig.actions().filter { if case .trigger = $0 { true } else { false } }.count
    }

    @Test func aPreparedStartWritesItsTriggerWhileAnotherThreadHoldsTheEngineState() throws {
        let rig = try Rig()
        let player = try preparedTap(rig)
        let triggeredUnderTheLock = try rig.whileTheEngineStateIsHeld(start: { try? player.start(atTime: 0) }) {
            triggers(rig) > 0 ? triggers(rig) : nil
        }
        #expect(triggeredUnderTheLock == 1, "\(rig.actions())")
        rig.clock.advance(by: 1)
        #expect(player.phase == .finished)
    }

    @Test func aStartAtAnotherRateGoesThroughTheMixNotThePulse() throws {
        let rig = try Rig()
        let player = try preparedTap(rig)
        player.playbackRate = 2
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(triggers(rig) == 0, "\(rig.actions())")
        #expect(rig.applied() == [Change(at: 0, strong: q(0.7), weak: q(0.3)), Change(at: 0.05, .off)])
        // Back at rate 1 it is armed again.
        player.playbackRate = 1
        try player.start(atTime: 0)
        #expect(triggers(rig) == 1)
    }

    @Test func controlsSentAfterThePulseWasPreparedSendTheStartThroughTheMix() throws {
        // A tone prepared at its full level, then an intensity of 0.3 sent to it while it waits (at once, then for
        // a moment before its start): its start plays at 0.3 through the mix, not the pulse prepared at full.
        for held in [false, true] {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 0.2))
            #expect(try player.prepare())
            try player.sendParameters(
                intensityControl(0.3),
                atTime: held ? 10.1 : 0)
            rig.clock.advance(by: 0.2)
            try player.start(atTime: 0)
            rig.clock.advance(by: 1)
            #expect(triggers(rig) == 0, "held: \(held), \(rig.actions())")
            #expect(
                rig.applied() == [Change(at: 0.2, strong: q(0.3), weak: q(0.3)), Change(at: 0.4, .off)],
                "held: \(held)")
            // Prepared again, with the control: the pulse is what the start should play, and it fires.
            #expect(try player.prepare())
            try player.start(atTime: 0)
            #expect(triggers(rig) == 1, "held: \(held)")
        }
    }

    @Test func mutedHapticsFireNoPreparedPulse() throws {
        let rig = try Rig()
        let player = try preparedTap(rig)
        rig.engine.isMutedForHaptics = true
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(triggers(rig) == 0, "\(rig.actions())")
        #expect(rig.applied().allSatisfy { $0 == Change(at: Double($0.time) / 1e6, .off) }, "\(rig.applied())")
    }

    @Test func aPulsePreparedOnAnEarlierOpeningOfTheOutputIsNeverFired() throws {
        let rig = try Rig()
        let player = try preparedTap(rig)
        rig.engine.stop()
        try rig.engine.start()
        let reopened = rig.actions().count
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        let after = rig.actions().dropFirst(reopened)
        #expect(!after.contains { if case .trigger = $0 { true } else { false } }, "\(Array(after))")
        #expect(after.contains(.apply(MotorMagnitudes(strong: q(0.7), weak: q(0.3)))))
    }

    /// A prepared player prepared again on an engine gone idle uploads its pulse once: the engine woken by the call
    /// prepares it again already, and the call uploaded it a second time and let the first go (until 6 December).
    @Test func preparingAgainOnAnIdleEngineUploadsThePulseOnce() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 2
        let rig = try Rig(options: options)
        let player = try preparedTap(rig)
        rig.clock.advance(by: 3)
        #expect(rig.actions().last == .close, "idle: the device let go")
        let idle = rig.actions().count
        #expect(try player.prepare())
        try player.start(atTime: 0)
        let after = Array(rig.actions().dropFirst(idle))
        #expect(after.filter { if case .prepare = $0 { true } else { false } }.count == 1, "\(after)")
        #expect(!after.contains { if case .release = $0 { true } else { false } }, "\(after)")
        #expect(after.last.map { if case .trigger = $0 { true } else { false } } == true, "\(after)")
    }

    @Test func aPlayerMadeBeforeAResetIsRefusedNotFired() throws {
        let rig = try Rig()
        let player = try preparedTap(rig)
        rig.engine.core.state.withLock { $0.resetGeneration.advance() }
        #expect(throws: HapticEngineError.self) { try player.start(atTime: 0) }
        #expect(triggers(rig) == 0)
    }
}

extension Rig {
    /// Runs `start` on one thread while another holds the engine's state lock, as the playback thread does for a
    /// pass, and returns what `written` finds once it finds anything, before the lock is released; nil when it found
    /// nothing within 30 s (a hang guard: a start that waited for the lock would never write, and the test fails
    /// rather than hangs; the starter shares two cores with two spinning threads, slowly under a sanitizer).
    func whileTheEngineStateIsHeld<T>(start: @escaping @Sendable () -> Void, written: () -> T?) throws -> T? {
        let holding = Lock(false)
        let release = Lock(false)
        let holder = try ServiceThread.start { [engine] in
            engine.core.state.withLock { _ in
                holding.withLock { $0 = true }
                while !release.withLock({ $0 }) { Sys.yield() }
            }
        }
        while !holding.withLock({ $0 }) { Sys.yield() }
        let starter = try ServiceThread.start(start)
        let deadline = Sys.monotonicNanoseconds() + 30_000_000_000
        var found = written()
        while found == nil, Sys.monotonicNanoseconds() < deadline {
            Sys.yield()
            found = written()
        }
        release.withLock { $0 = true }
        holder.join()
        starter.join()
        return found
    }
}

/// A manual clock whose timers note how they were woken (`wake()` or `wake(by:)`, in clock time) before doing what
/// the manual clock's timer does.
final class WakeNotingClock: HapticClock {
    enum Wake: Equatable, Sendable {
        case now
        case by(Double)
    }

    let manual: ManualClock
    let wakes = Inbox<Wake>()

    init(startingAt start: Double) { manual = ManualClock(startingAt: start) }

    var now: Double { manual.now }

    func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer {
        NotingTimer(inner: manual.makeTimer(work), wakes: wakes)
    }

    private struct NotingTimer: HapticTimer {
        let inner: any HapticTimer
        let wakes: Inbox<Wake>

        func wake() {
            wakes.put(.now)
            inner.wake()
        }

        func wake(by time: Double) {
            wakes.put(.by(time))
            inner.wake(by: time)
        }

        func cancel() { inner.cancel() }
    }
}

@Suite struct PreparedStartWakeTests {
    @Test func aPreparedStartWakesNoThreadAndAsksForTheTimerAnIntervalAndThePlanningBeforeItsPulseEnds() throws {
        // The generic profile: a 100 ms pulse, a 10 ms interval, 10 ms to plan what follows it. The start's write
        // is its trigger at 10.05; the timer is asked for by 10.13, and not woken at once.
        let clock = WakeNotingClock(startingAt: 10)
        let recorder = RecordingOutput()
        let engine = HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger())
        try engine.start()
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        #expect(try player.prepare())
        clock.manual.advance(by: 0.05)
        let before = clock.wakes.all.count
        try player.start(atTime: 0)
        let wakes = clock.wakes.all.dropFirst(before)
        #expect(recorder.records().contains { if case .trigger = $0.action { true } else { false } })
        #expect(!wakes.contains(.now), "\(wakes)")
        let expected = 10.05 + 0.1 - RenderProfile.genericRumble.minimumUpdateInterval - 0.010
        #expect(
            wakes.contains { if case .by(let time) = $0 { abs(time - expected) < 1e-9 } else { false } }, "\(wakes)")
        clock.manual.advance(by: 1)
        #expect(player.phase == .finished)
        #expect(recorder.appliedMixes().allSatisfy { $0.mix.isOff }, "the pulse alone played")
    }

    @Test func aPreparedStartOfAPlayerThatPlaysWakesTheTimerAtOnceForTheMixItChanges() throws {
        // A 100 ms pulse, then 0.4 to 1 s. Restarted at 10.5 from its top, the player's 0.4 leaves the mix now (its
        // pulse plays again, on its own slot, until 10.6): the timer is woken now, to write that change.
        let clock = WakeNotingClock(startingAt: 10)
        let recorder = RecordingOutput()
        let engine = HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger())
        try engine.start()
        let player = try engine.makeAdvancedPlayer(
            timeline: timeline(pulse(0.7, 0.3, to: 0.1), pulse(0.4, 0.4, from: 0.1, to: 1)))
        #expect(try player.prepare())
        try player.start(atTime: 0)
        clock.manual.advance(by: 0.5)
        let before = clock.wakes.all.count
        try player.start(atTime: 0)
        let wakes = clock.wakes.all.dropFirst(before)
        #expect(wakes.contains(.now), "\(wakes)")
        clock.manual.advance(by: 0.05)
        #expect(recorder.appliedMixes().last?.mix.isOff == true, "\(recorder.appliedMixes())")
    }
}
