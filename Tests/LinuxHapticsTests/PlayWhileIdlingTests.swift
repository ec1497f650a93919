// A play on an engine that stops running while the play starts it: the engine idles (auto-shutdown) between the start
// the play made and the play's own decision, or a play starts it again while the idle pass still lets the device go.
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Logging
@_spi(Internals) import LinuxSystem
import Testing

@testable import LinuxHaptics

@Suite struct PlayWhileIdlingTests {
    /// A play on an idle engine starts it; an engine due to idle again before the play decides its start (here at
    /// every first read of the clock after a start, where the play asks what time it is: as with a delay shorter than
    /// a start) does not idle while the play decides, and the play plays at once. Until 7 December the start was
    /// queued on the idle engine with no output (the play said it had started, nothing played, and the tap played at
    /// the next `start()`); then, until the engine stopped idling under a play, the play started the engine again,
    /// which idled again, and threw `notRunning` after three starts (seen with an `autoShutdownDelay` of a
    /// microsecond and the cores busy).
    @Test func anEngineDueToIdleAtEveryStartAPlayMakesDoesNotIdleBeforeThePlayDecides() throws {
        let rig = try TrapRig()
        rig.clock.inner.advance(by: 2)
        #expect(!rig.engine.isRunning, "the engine did not idle")
        let tap = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 2)))
        // The clock's own ManualClock: the trap, kept for every start, holding the trap clock would keep it for ever.
        rig.clock.atTheFirstReadAfterEachStart { [inner = rig.clock.inner] in inner.advance(by: 2) }
        #expect(throws: Never.self) { try tap.start(atTime: 0) }
        #expect(rig.clock.sprung, "the engine was not due to idle during the play's start: the test checks nothing")
        #expect(rig.engine.isRunning)
        let played = rig.clock.now
        rig.clock.inner.advance(by: 0.5)
        #expect(rig.recorder.appliedMixes().contains { $0.time >= played && !$0.mix.isOff }, "nothing played")
        // Once the play is decided and over, the engine idles as its option says.
        rig.clock.inner.advance(by: 3)
        #expect(!rig.engine.isRunning, "the engine no longer idles")
    }

    /// An engine held from idling while a play decided idles once the play is over, even when the play decided
    /// nothing (it failed): the play wakes the timer, whose pass would otherwise sleep with no deadline, the device
    /// held, until something else woke it.
    @Test func anEngineHeldFromIdlingByAPlayThatFailedIdlesWhenThePlayEnds() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 1
        let clock = ManualClock(startingAt: 10)
        let core = EngineCore(source: HeldCloseSource(), options: options, clock: clock, logger: quietLogger())
        defer { core.destroy() }
        try core.start()
        let refusal = HapticEngineError(.invalidArgument, "refused by the test")
        #expect(throws: refusal) {
            try core.decideOnARunningEngine { () throws(HapticEngineError) -> Int? in
                clock.advance(by: 2)
                #expect(core.state.withLock { $0.phase } == .running, "the engine idled while the play decided")
                throw refusal
            }
        }
        #expect(core.state.withLock { $0.phase } == .idle, "the engine did not idle once the play was over")
    }

    /// A pass made while a play decides, before the engine is due to idle, still asks to run when it is due: the
    /// engine idles then if the play left nothing playing, with no other wake-up.
    @Test func aPassWhileAPlayDecidesKeepsTheIdleDeadline() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 1
        let clock = DeadlineClock()
        let core = EngineCore(source: HeldCloseSource(), options: options, clock: clock, logger: quietLogger())
        defer { core.destroy() }
        try core.start()
        let deadline = try core.decideOnARunningEngine { () throws(HapticEngineError) -> Double?? in
            clock.inner.advance(by: 0.5)
            return clock.lastDeadline.withLock { $0 }
        }
        #expect(deadline == 11, "the pass made while the play decided asked to run at \(String(describing: deadline))")
    }

    /// A prepared tap whose start goes out as its pulse's trigger, on an engine that idles around that trigger (its
    /// pass, due then, closes the device: before the write, which then fails, or after it, which ends the pulse), is
    /// started again the ordinary way: the engine runs and the tap plays. `armed`: the start made at 0, an armed
    /// start's write; otherwise at the engine's time, a trigger decided under the lock. Until 7 December the start
    /// was queued or recorded on the idle engine with no output: the play said it had started, and the tap played at
    /// the next `start()`.
    @Test(arguments: [(armed: false, afterTheWrite: false), (false, true), (true, true)])
    func aPreparedTapWhoseEngineIdlesAroundItsTriggerPlaysOnARunningEngine(armed: Bool, afterTheWrite: Bool) throws {
        let rig = try TrapRig()
        let tap = try rig.preparedTap()
        rig.clock.inner.advance(by: 0.5)
        let idled = Lock(false)
        let idle = { @Sendable [clock = rig.clock, engine = rig.engine] in
            clock.inner.advance(by: 1)
            idled.withLock { $0 = !engine.isRunning }
        }
        if afterTheWrite {
            rig.recorder.aroundNextTrigger(after: idle)
        } else {
            rig.recorder.aroundNextTrigger(before: idle)
        }
        try tap.start(atTime: armed ? 0 : rig.engine.currentTime)
        #expect(idled.withLock { $0 }, "the engine did not idle around the trigger: the test checks nothing")
        #expect(rig.engine.isRunning)
        let played = rig.clock.now
        rig.clock.inner.advance(by: 0.5)
        #expect(rig.recorder.appliedMixes().contains { $0.time >= played && !$0.mix.isOff }, "nothing played")
    }

    /// A prepared tap whose trigger went out just before the engine idled (the close ended the pulse) and a play on
    /// another thread started the engine again before the tap's start was recorded: the tap plays its top on the
    /// device opened again. Until 7 December the start was recorded on the new device as if the pulse played there:
    /// the mix left the pulse's top out, and it never played.
    @Test func aTapWhoseEngineIdlesAndStartsAgainRightAfterItsTriggerPlaysItsTopOnTheNewDevice() throws {
        let rig = try TrapRig()
        let tap = try rig.preparedTap()
        let reopened = try rig.start(tap, theEngineIdlingAndStartedAgain: .afterTheWrite)
        rig.clock.inner.advance(by: 0.5)
        let onTheNewDevice = rig.recorder.records()[reopened...]
        let topPlayed = onTheNewDevice.contains {
            switch $0.action {
            case .trigger: true
            case .apply(let mix): mix.strong > 0.9
            default: false
            }
        }
        #expect(topPlayed, "the tap's top never played on the device opened again: \(onTheNewDevice.map(\.action))")
    }

    /// A prepared tap whose trigger fails on the device the engine closed as it idled, a play on another thread
    /// having started the engine again in between (which prepared the tap's pulse anew on the new device): the new
    /// pulse stays the engine's, and its slot with it. Until 7 December the failure forgot the new pulse, whose slot
    /// stayed taken until the device closed: a second player found none.
    @Test func aTriggerThatFailsOnTheIdledDeviceKeepsThePulsePreparedOnTheNewOne() throws {
        // The mix's slot and two pulses.
        let rig = try TrapRig(effectSlots: 3)
        let tap = try rig.preparedTap()
        let other = try rig.engine.makeAdvancedPlayer(timeline: TrapRig.tap)
        let reopened = try rig.start(tap, theEngineIdlingAndStartedAgain: .beforeTheWrite)
        rig.clock.inner.advance(by: 0.2)
        let onTheNewDevice = rig.recorder.records()[reopened...]
        let preparedAgain = onTheNewDevice.compactMap { if case .prepare(let id) = $0.action { id } else { nil } }
        let released = Set(onTheNewDevice.compactMap { if case .release(let id) = $0.action { id } else { nil } })
        try #require(!preparedAgain.isEmpty, "the tap was not prepared on the new device: the test checks nothing")
        let kept = rig.engine.core.state.withLock { $0.prepared.values.map(\.id) }
        for id in preparedAgain where !released.contains(id) {
            #expect(kept.contains(id), "pulse \(id), prepared on the new device, is neither the engine's nor released")
        }
        _ = try tap.prepare()
        #expect(try other.prepare(), "the second player found no slot: one is held by a pulse the engine forgot")
    }

    /// A start of a staged opening whose engine a `stop()` on another thread stops between the opening's write and
    /// its record: the start is not kept, and nothing plays at the engine's next `start()`. Until 7 December it was
    /// queued on the stopped engine and played at the next `start()`, however much later. (The stop is given 50 ms to
    /// stop the engine: the staged start's claim, which this thread holds, keeps the stop from returning.)
    @Test func aStagedStartStoppedBeforeItIsRecordedDoesNotPlayAtTheNextStart() throws {
        let rig = try TrapRig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 0.3)))
        let armed = rig.engine.core.state.withLock { state in
            state.stagedOpening.map { state.stagedStart.mayFire(for: $0.player) }
        }
        try #require(armed == true, "no staged start armed: the test checks nothing")
        let stopper = Lock<ServiceThread?>(nil)
        rig.clock.atTheNextRead { [engine = rig.engine] in
            let thread = try? ServiceThread.start { engine.stop() }
            stopper.withLock { $0 = thread }
            Sys.sleep(nanoseconds: 50_000_000)
        }
        try? player.start(atTime: 0)
        stopper.withLock { $0 }?.join()
        #expect(rig.clock.sprung, "the trap did not spring: the test checks nothing")
        #expect(!rig.engine.isRunning)
        rig.clock.inner.advance(by: 5)
        try rig.engine.start()
        let restarted = try #require(rig.recorder.records().lastIndex { $0.action == .open })
        rig.clock.inner.advance(by: 0.5)
        let played = rig.recorder.records()[restarted...].filter {
            if case .apply(let mix) = $0.action { !mix.isOff } else { false }
        }
        #expect(played.isEmpty, "a start made before the stop played at the next start(): \(played)")
    }

    /// `prepare()` on an idle engine due to idle again right after the start it makes: the engine does not idle
    /// before the pulse is uploaded to the device it opened (it idles after, nothing playing), and the pulse is
    /// prepared again at the next start. Until 7 December the engine idled in between, and the upload, to the device
    /// it had closed, failed: `prepare()` said false.
    @Test func aPrepareOnAnEngineDueToIdleAfterItsStartUploadsBeforeTheIdle() throws {
        let rig = try TrapRig()
        let tap = try rig.engine.makeAdvancedPlayer(timeline: TrapRig.tap)
        rig.clock.inner.advance(by: 2)
        #expect(!rig.engine.isRunning, "the engine did not idle")
        rig.recorder.clearRecords()
        rig.clock.atTheFirstReadAfterEachStart(limit: 1) { [inner = rig.clock.inner] in inner.advance(by: 2) }
        let prepared = try tap.prepare()
        #expect(rig.clock.sprung, "the engine was not due to idle during the prepare: the test checks nothing")
        #expect(prepared)
        let actions = rig.recorder.records().map(\.action)
        let upload = actions.firstIndex { if case .prepare = $0 { true } else { false } }
        #expect(upload != nil && upload! < (actions.firstIndex(of: .close) ?? .max), "\(actions)")
        try rig.engine.start()
        let restarted = try #require(rig.recorder.records().lastIndex { $0.action == .open })
        #expect(rig.recorder.records()[restarted...].contains { if case .prepare = $0.action { true } else { false } })
    }

    /// A prepared tap played on an engine due to idle at every start a play makes opens the device once: the engine
    /// is kept from idling until the play's decision, a trigger, is carried out. On 7 December, with the hold over
    /// the decision alone, the engine idled before the trigger, whose failure started the play again, which started
    /// the engine again, and so on for as long as the engine idled (the trap here springs at 25 starts at most).
    @Test func aPreparedTapOnAnEngineDueToIdleAtEveryStartOpensTheDeviceOnce() throws {
        let rig = try TrapRig()
        let tap = try rig.preparedTap()
        rig.clock.inner.advance(by: 2)
        #expect(!rig.engine.isRunning, "the engine did not idle")
        rig.recorder.clearRecords()
        rig.clock.atTheFirstReadAfterEachStart(limit: 25) { [inner = rig.clock.inner] in inner.advance(by: 2) }
        try tap.start(atTime: rig.engine.currentTime)
        #expect(rig.clock.sprung, "the engine was not due to idle during the play: the test checks nothing")
        #expect(rig.recorder.records().filter { $0.action == .open }.count == 1)
        #expect(rig.recorder.records().contains { if case .trigger = $0.action { true } else { false } })
    }

    /// A prepared tap whose armed start's write is cut, each time, by the engine idling right after it opens the
    /// device once more, no more: the play started again the ordinary way keeps the engine from idling until its
    /// trigger is recorded. (The hook that idles it is armed again after each write, 10 times at most.)
    @Test func aPreparedTapWhoseWritesTheEngineIdlesAfterEachTimeOpensTheDeviceOnceMore() throws {
        let rig = try TrapRig()
        let tap = try rig.preparedTap()
        rig.clock.inner.advance(by: 0.5)
        rig.recorder.clearRecords()
        let idles = Lock(0)
        @Sendable func idleAfterTheNextWrite() {
            rig.recorder.aroundNextTrigger(after: { [clock = rig.clock] in
                clock.inner.advance(by: 1)
                let again = idles.withLock { count -> Bool in
                    count += 1
                    return count < 10
                }
                if again { idleAfterTheNextWrite() }
            })
        }
        idleAfterTheNextWrite()
        // The hook armed again and not taken holds the recorder: let go.
        defer { rig.recorder.aroundNextTrigger() }
        try tap.start(atTime: 0)
        #expect(idles.withLock { $0 } >= 1, "no trigger was written: the test checks nothing")
        #expect(rig.recorder.records().filter { $0.action == .open }.count == 1)
        #expect(rig.engine.isRunning)
    }

    /// A play on an app's thread that holds the app's lock, while the engine idles and a reset handler (on the sound
    /// stream's thread: the sound device came back) waits for that lock: the play returns, and so does the handler.
    /// The idle pass lets the device go, then closes the sound stream, which waits for the stream's thread, after a
    /// start may go on. Until 7 December a play waited for the whole release, the stream's close with it, so it
    /// waited for the handler, which waited for the play's thread: neither returned (the test gives up after 20 s and
    /// lets the handler go).
    @Test func aPlayWhileTheIdleEngineWaitsForAResetHandlerThatWaitsForThePlayReturns() throws {
        let core = try engineWhoseSoundDeviceGoesAndComesBack()
        // The app's lock, held by the app's thread until its play returns, and taken by its reset handler.
        let appLockHeld = Lock(true)
        let giveUp = Lock(false)
        core.resetHandler = {
            while appLockHeld.withLock({ $0 }), !giveUp.withLock({ $0 }) { Sys.sleep(nanoseconds: 1_000_000) }
        }
        let sawIdle = Lock(false)
        let returned = Lock<Result<Void, HapticEngineError>?>(nil)
        let app = try ServiceThread.start {
            sawIdle.withLock { $0 = waitUntilIdle(core) }
            let result = Result { () throws(HapticEngineError) in try core.ensureRunning() }
            returned.withLock { $0 = result }
            appLockHeld.withLock { $0 = false }
        }
        let deadline = MonotonicTime.nanoseconds() + 20_000_000_000
        while MonotonicTime.nanoseconds() < deadline, returned.withLock({ $0 }) == nil {
            Sys.sleep(nanoseconds: 1_000_000)
        }
        let result = returned.withLock { $0 }
        let summary = core.stateSummary
        giveUp.withLock { $0 = true }
        app.join()
        core.destroy()
        #expect(sawIdle.withLock { $0 }, "the engine did not idle while the handler waited: the test checks nothing")
        guard let result else {
            Issue.record("the play and the reset handler waited for each other: \(summary)")
            return
        }
        #expect(throws: Never.self) { try result.get() }
    }

    /// The sound stream an idle engine sets aside is taken up again by the next sound, while it is not closed yet:
    /// a play right after an idle keeps the sound device (an `hw:` device takes one stream at a time, and a second
    /// open is refused busy: the play went without sound). Once closed, the next sound opens another.
    @Test func aSoundRightAfterTheIdleStreamIsSetAsideTakesItUpAgain() throws {
        let opens = Lock(0)
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in
            opens.withLock { $0 += 1 }
            return RecordingAudioOutput(origin: MonotonicTime.nanoseconds(), sampleRate: 48_000)
        }
        let core = EngineCore(
            source: HeldCloseSource(), options: options, clock: ManualClock(startingAt: 10), logger: quietLogger())
        defer { core.destroy() }
        let audio = try #require(core.audio)
        #expect(audio.lead() != nil)
        audio.setStreamAside()
        #expect(audio.lead() != nil)
        audio.closeSetAside()
        #expect(opens.withLock { $0 } == 1, "the stream set aside was not taken up again")
        audio.setStreamAside()
        audio.closeSetAside()
        #expect(audio.lead() != nil)
        #expect(opens.withLock { $0 } == 2, "a stream set aside and closed was taken up")
    }

    /// A resume whose device goes (the engine then waits for it) before the resume is decided is refused, as a
    /// resume on an engine that waits for its device is: the play finds no device to start the engine with. Until 7
    /// December the resume was queued on the engine with no output and said it had resumed.
    @Test func aResumeWhoseDeviceGoesBeforeItIsDecidedIsRefused() throws {
        let rig = try TrapRig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 2)))
        try player.start(atTime: 0)
        try player.pause(atTime: 0)
        rig.clock.inner.advance(by: 0.1)
        rig.clock.atTheNextRead { [recorder = rig.recorder] in recorder.unplug() }
        #expect(throws: HapticEngineError.self) { try player.resume(atTime: 0) }
        #expect(rig.clock.sprung, "the device did not go during the resume: the test checks nothing")
    }

    /// A play that starts an engine while its idle pass still lets the device go (the pass is held in the output's
    /// close here) waits for that release to end, so that what the release lets go is the idle engine's only: the
    /// engine runs with its hot-plug watch. Until 7 December the release, once its close returned, cancelled the
    /// watch of the engine the play had started meanwhile: an unplug then went unheard until the next stop.
    @Test func aPlayThatStartsAnEngineLettingItsDeviceGoKeepsItsHotPlugWatch() throws {
        let source = HeldCloseSource()
        // Whether the play's start waits for the release or goes on without waiting, the close is let go then.
        let log = RecordingLog { _, message in
            if message.hasPrefix("haptic engine started") || message.hasPrefix("a start waits") {
                source.releaseClose()
            }
        }
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 1
        let clock = ManualClock(startingAt: 10)
        let core = EngineCore(source: source, options: options, clock: clock, logger: log.logger)
        defer { core.destroy() }
        try core.start()
        #expect(source.liveWatches.withLock { $0 } == 1)
        source.holdNextClose()
        let idler = try ServiceThread.start { clock.advance(by: 1) }
        try spin(until: "the idle pass closes the device") { source.closing.withLock { $0 } }
        #expect(core.state.withLock { $0.phase } == .idle)
        try core.ensureRunning()
        idler.join()
        let (phase, watched) = core.state.withLock { ($0.phase, $0.watch != nil) }
        #expect(phase == .running)
        #expect(watched, "the engine runs with no hot-plug watch")
        #expect(source.liveWatches.withLock { $0 } == 1)
        #expect(source.opens.withLock { $0 } == 2)
    }

    /// A reset handler runs on the thread that heard of the return (here the sound stream's, when the sound device
    /// came back); the engine idles while it runs, and its idle pass, closing the sound, waits for that thread to end.
    /// A play the handler makes then starts the engine without waiting for that close, which comes after the
    /// release a start waits for. On 7 December, the day the wait came, it took in the close, and a play from the
    /// handler and the release waited for each other (the test then records the hang and leaves the engine to it).
    @Test func aPlayFromAResetHandlerWhileTheIdlePassClosesItsThreadDoesNotWaitForIt() throws {
        let core = try engineWhoseSoundDeviceGoesAndComesBack()
        let sawIdle = Lock(false)
        let returned = Lock<Result<Void, HapticEngineError>?>(nil)
        core.resetHandler = { [weak core] in
            guard let core else { return }
            // The app takes a while here (it makes its players again), and the engine idles meanwhile.
            sawIdle.withLock { $0 = waitUntilIdle(core) }
            let result = Result { () throws(HapticEngineError) in try core.ensureRunning() }
            returned.withLock { $0 = result }
        }
        let deadline = MonotonicTime.nanoseconds() + 20_000_000_000
        while MonotonicTime.nanoseconds() < deadline, returned.withLock({ $0 }) == nil {
            Sys.sleep(nanoseconds: 1_000_000)
        }
        guard let result = returned.withLock({ $0 }) else {
            Issue.record("the reset handler's play never returned: \(core.stateSummary)")
            return
        }
        defer { core.destroy() }
        #expect(sawIdle.withLock { $0 }, "the engine did not idle while the handler ran: the test checks nothing")
        #expect(throws: Never.self) { try result.get() }
    }
}

/// A started engine that idles after 0.2 s with nothing playing, on the monotonic clock, whose sound stream is open
/// on a device that goes away after a tenth of a second and comes back at once: its reset handler is then called on
/// the sound stream's thread.
private func engineWhoseSoundDeviceGoesAndComesBack() throws -> EngineCore {
    let opened = Lock(0)
    var options = HapticEngineOptions()
    options.autoShutdownDelay = 0.2
    options.audioOutputFactory = { _ in
        let count = opened.withLock { count -> Int in
            count += 1
            return count
        }
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds(), sampleRate: 48_000)
        if count == 1 { output.fail(after: 4_800) }
        return output
    }
    let core = EngineCore(source: HeldCloseSource(), options: options, clock: MonotonicClock(), logger: quietLogger())
    try core.start()
    try #require(core.audio?.lead() != nil, "no sound stream")
    return core
}

/// Waits until `core` idles, 10 s at most; whether it did.
private func waitUntilIdle(_ core: EngineCore) -> Bool {
    let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
    while MonotonicTime.nanoseconds() < deadline {
        if core.state.withLock({ $0.phase == .idle }) { return true }
        Sys.sleep(nanoseconds: 1_000_000)
    }
    return false
}

/// An engine on a recording output and a trap clock, that idles after a second with nothing playing.
private struct TrapRig {
    let clock = TrapClock()
    let recorder: RecordingOutput
    let engine: HapticEngine

    init(effectSlots: Int? = nil) throws {
        recorder = RecordingOutput(effectSlots: effectSlots, renderProfile: .genericRumble)
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 1
        let clock = clock
        let log = RecordingLog { _, message in if message.hasPrefix("haptic engine started") { clock.engineStarted() } }
        engine = HapticEngine(output: .recording(recorder), options: options, clock: clock, logger: log.logger)
        try engine.start()
    }

    /// A 50 ms top, then a long weaker tail.
    static let tap = timeline(pulse(1, 1, to: 0.05), pulse(0.5, 0.5, from: 0.05, to: 3))

    /// A player of `tap`, its top prepared as a pulse (played through the mix after it).
    func preparedTap() throws -> any HapticAdvancedPatternPlayer {
        let tap = try engine.makeAdvancedPlayer(timeline: Self.tap)
        try #require(try tap.prepare(), "the tap was not prepared: the test checks nothing")
        return tap
    }

    enum TriggerMoment { case beforeTheWrite, afterTheWrite }

    /// Starts `tap`, prepared, half a second on, the engine idling around its trigger's write (`moment`) and started
    /// again there, as by a play on another thread; the index of the records' last open (the device opened again).
    func start(
        _ tap: any HapticAdvancedPatternPlayer, theEngineIdlingAndStartedAgain moment: TriggerMoment
    ) throws -> Int {
        clock.inner.advance(by: 0.5)
        let idled = Lock(false)
        let idleAndStart = { @Sendable [clock, engine] in
            clock.inner.advance(by: 1)
            idled.withLock { $0 = !engine.isRunning }
            try? engine.start()
        }
        switch moment {
        case .beforeTheWrite: recorder.aroundNextTrigger(before: idleAndStart)
        case .afterTheWrite: recorder.aroundNextTrigger(after: idleAndStart)
        }
        try tap.start(atTime: engine.currentTime)
        try #require(idled.withLock { $0 }, "the engine did not idle around the trigger: the test checks nothing")
        return try #require(recorder.records().lastIndex { $0.action == .open })
    }
}

/// A manual clock with a trap: an action run at the first time read outside the timer's work once the trap is set
/// (`atTheNextRead`), or once each engine start has been made (`atTheFirstReadAfterEachStart`, up to a number of
/// starts): between the start a play made and its own decision, where the play asks what time it is.
private final class TrapClock: HapticClock, Sendable {
    let inner = ManualClock(startingAt: 10)
    private struct State {
        var setAfterStart: (@Sendable () -> Void)?
        var startsLeft = 0
        var trap: (@Sendable () -> Void)?
        var sprung = false
        var timerWork = 0
    }
    private let state = Lock(State())

    func atTheNextRead(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.trap = action } }
    func atTheFirstReadAfterEachStart(limit: Int = .max, _ action: @escaping @Sendable () -> Void) {
        state.withLock {
            $0.setAfterStart = action
            $0.startsLeft = limit
        }
    }
    /// Whether the trap's action ran.
    var sprung: Bool { state.withLock { $0.sprung } }

    func engineStarted() {
        state.withLock { state in
            guard let action = state.setAfterStart, state.startsLeft > 0 else { return }
            state.startsLeft -= 1
            state.trap = action
        }
    }

    var now: Double {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.timerWork == 0, let trap = state.trap else { return nil }
            state.trap = nil
            state.sprung = true
            return trap
        }
        action?()
        return inner.now
    }

    func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer {
        inner.makeTimer { [self] in
            state.withLock { $0.timerWork += 1 }
            defer { state.withLock { $0.timerWork -= 1 } }
            return work()
        }
    }
}

/// A manual clock whose timer keeps the deadline its work returned last.
private final class DeadlineClock: HapticClock, Sendable {
    let inner = ManualClock(startingAt: 10)
    let lastDeadline = Lock<Double?>(nil)

    var now: Double { inner.now }

    func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer {
        inner.makeTimer { [self] in
            let deadline = work()
            lastDeadline.withLock { $0 = deadline }
            return deadline
        }
    }
}

/// A source whose output's next close can be held until released; counts the opens and the watches not cancelled.
/// Its outputs take every command and play nothing.
private final class HeldCloseSource: OutputSource {
    let opens = Lock(0)
    let liveWatches = Lock(0)
    let closing = Lock(false)
    private let held = Lock(false)
    private let released = Lock(false)

    func holdNextClose() { held.withLock { $0 = true } }
    /// Lets a close held now go on (a release asked for before the close began is not kept).
    func releaseClose() {
        if closing.withLock({ $0 }) { released.withLock { $0 = true } }
    }

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        opens.withLock { $0 += 1 }
        return Output(source: self)
    }

    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? {
        liveWatches.withLock { $0 += 1 }
        return Watch(source: self)
    }

    struct Watch: OutputWatch {
        let source: HeldCloseSource
        func cancel() { source.liveWatches.withLock { $0 -= 1 } }
    }

    final class Output: InertOutput {
        let source: HeldCloseSource
        init(source: HeldCloseSource) { self.source = source }
        var capabilities: OutputCapabilities {
            OutputCapabilities(name: "held close", isVirtual: true, renderProfile: .genericRumble)
        }
        func close() {
            let hold = source.held.withLock { held -> Bool in
                defer { held = false }
                return held
            }
            guard hold else { return }
            source.closing.withLock { $0 = true }
            while !source.released.withLock({ $0 }) { Sys.yield() }
        }
    }
}

/// An output that takes every command and plays nothing, and has no prepared pulses: what a test's output does
/// beyond the few calls it watches.
protocol InertOutput: MotorOutput {}

extension InertOutput {
    func sendNeutral() throws(OutputFailure) {}
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) {}
    func keepAlive() throws(OutputFailure) {}
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        throw OutputFailure(.unsupported, "no prepared pulses")
    }
    func trigger(prepared id: Int) throws(OutputFailure) {}
    func stop(prepared id: Int) throws(OutputFailure) {}
    func release(prepared id: Int) {}
    func currentLevels() -> MotorMagnitudes? { nil }
}
