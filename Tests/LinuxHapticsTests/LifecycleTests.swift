// The engine's lifecycle under a manual clock: stopped and reset handlers, recovery, idle shutdown,
// prepared pulses and slot limits, notifyWhenPlayersFinished.
import Foundation
import AHAP
import HapticRendering
@testable import LinuxHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct LifecycleTests {
    @Test func unplugStopsWithDeviceRemovedAndReplugResets() throws {
        let rig = try Rig()
        let reasons = Inbox<HapticEngineStoppedReason>()
        let resets = Inbox<Double>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        rig.engine.resetHandler = { [clock = rig.clock] in resets.put(clock.now) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 5)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.2)
        rig.recorder.unplug()
        #expect(reasons.all == [.gameControllerDisconnect])
        #expect(rig.actions().last == .close)
        #expect(!rig.engine.isRunning)
        rig.clock.advance(by: 1)
        rig.recorder.clearRecords()
        rig.recorder.replug()
        #expect(resets.all.count == 1)
        #expect(rig.actions() == [.open, .neutral])
        #expect(throws: HapticEngineError(.playerInvalidated, "the engine's output was reset: make a new player")) {
            try player.start(atTime: 0)
        }
        let fresh = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.1)))
        try fresh.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied(since: 11.2) == [
                Change(at: 0, .off), Change(at: 0, strong: q(0.5), weak: 0), Change(at: 0.1, .off),
            ])
    }

    /// A game's reset handler makes its new players before it lets the old ones go (`player = try
    /// engine.makeAdvancedPlayer(...)`). The reset engine numbers its players afresh, so a new player may carry
    /// the id an old handle had: letting that handle go, or setting its completion handler, must leave the new
    /// player alone (the soak found new players invalidated with no reset since they were made).
    @Test func oldHandlesLetGoAfterAResetLeaveTheNewPlayersAlone() throws {
        let rig = try Rig()
        var old: (any HapticAdvancedPatternPlayer)? = try rig.engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 1, to: 5)))
        try old?.start(atTime: 0)
        rig.clock.advance(by: 0.2)
        rig.recorder.unplug()
        rig.recorder.replug()
        let fresh = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.1)))
        let finished = Inbox<String>()
        fresh.completionHandler = { finished.put($0.map { "\($0.kind)" } ?? "finished") }
        old?.completionHandler = { _ in finished.put("the old player's handler") }
        old = nil
        try fresh.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(finished.all == ["finished"])
        try fresh.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(finished.all == ["finished", "finished"])
    }

    @Test func anEngineStartedWithNoDeviceRunsWhenOneIsPluggedIn() throws {
        let rig = try Rig(start: false)
        let resets = Inbox<Double>()
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.resetHandler = { [clock = rig.clock] in resets.put(clock.now) }
        rig.engine.stoppedHandler = { reasons.put($0) }
        rig.recorder.unplug()
        #expect(throws: HapticEngineError(.noDevice, "the recording output is unplugged")) { try rig.engine.start() }
        #expect(!rig.engine.isRunning)
        rig.clock.advance(by: 1)
        rig.recorder.replug()
        #expect(resets.all == [11], "the reset handler is where an app makes its players")
        #expect(reasons.all.isEmpty, "an engine that never ran has not stopped")
        #expect(rig.engine.isRunning)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.04)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.actions() == [.open, .neutral, .apply(MotorMagnitudes(strong: q(0.5), weak: 0)), .apply(.off)])
    }

    /// uinput announces a pad before its creator's `UI_DEV_CREATE` has returned, and answers an upload with
    /// `ENODEV` until it has: the soak's quick replugs met that window, and an engine that took the refusal as
    /// final never came back.
    @Test func aReplugRefusedAsGoneAFewTimesIsTriedAgainAndResets() throws {
        let rig = try Rig()
        let resets = Inbox<Double>()
        rig.engine.resetHandler = { [clock = rig.clock] in resets.put(clock.now) }
        rig.recorder.unplug()
        rig.recorder.clearRecords()
        rig.recorder.failNext(.deviceGone, count: 2)
        rig.recorder.replug()
        #expect(resets.all.count == 1)
        #expect(rig.engine.isRunning)
        #expect(rig.actions() == [.open, .neutral], "the third try opened it")
    }

    @Test func aReplugThatKeepsRefusingAsGoneLeavesTheEngineWaitingForTheNext() throws {
        let rig = try Rig()
        let resets = Inbox<Double>()
        rig.engine.resetHandler = { [clock = rig.clock] in resets.put(clock.now) }
        rig.recorder.unplug()
        rig.recorder.failNext(.deviceGone, count: 100)
        rig.recorder.replug()
        #expect(resets.all.isEmpty)
        #expect(!rig.engine.isRunning)
        rig.recorder.clearFailures()
        rig.recorder.replug()
        #expect(resets.all.count == 1, "the next announcement of the device is tried afresh")
        #expect(rig.engine.isRunning)
    }

    @Test func aReplugRefusedForAnotherReasonIsNotTriedAgain() throws {
        let rig = try Rig()
        rig.recorder.unplug()
        rig.recorder.clearRecords()
        rig.recorder.failNext(.permissionDenied)
        rig.recorder.replug()
        #expect(!rig.engine.isRunning)
        #expect(rig.actions().filter { $0 == .open }.isEmpty, "the one try failed at its open")
    }

    @Test func theStateSummarySaysThePhaseThePlayersAndThePlan() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 5)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.1)
        let summary = rig.engine.stateSummary
        #expect(summary.hasPrefix("phase running, output open"))
        #expect(summary.contains("players [0: playing, 0 queued]"))
        #expect(summary.contains("current"), "the plan was made for the players as they are")
        #expect(summary.hasSuffix("timer running"), "no pass runs while nobody asks for one")
    }

    @Test func stoppingAWaitingEngineEndsTheWait() throws {
        let rig = try Rig(start: false)
        let resets = Inbox<Double>()
        rig.engine.resetHandler = { [clock = rig.clock] in resets.put(clock.now) }
        rig.recorder.unplug()
        #expect(throws: HapticEngineError.self) { try rig.engine.start() }
        rig.engine.stop()
        rig.recorder.replug()
        #expect(resets.all.isEmpty)
        #expect(rig.actions().isEmpty, "nothing opened the device")
    }

    @Test func aWriteFailingWithDeviceGoneIsAnUnplug() throws {
        let rig = try Rig()
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let player = try rig.engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 1, to: 0.1), pulse(0, 1, from: 0.1, to: 0.2)))
        let completions = Inbox<HapticEngineError.Kind?>()
        player.completionHandler = { completions.put($0?.kind) }
        try player.start(atTime: 0)
        rig.recorder.failNext(.deviceGone)
        rig.clock.advance(by: 1)
        #expect(reasons.all == [.gameControllerDisconnect])
        #expect(completions.all == [.noDevice])
        #expect(rig.actions().last == .close)
    }

    @Test func aDeviceErrorStopsButTheEngineStaysUsable() throws {
        let rig = try Rig()
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        rig.recorder.failNext(.noSlot)
        try player.start(atTime: 0)
        #expect(reasons.all == [.deviceError])
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.engine.isRunning)
        #expect(rig.applied(since: 10).suffix(2) == [Change(at: 0, strong: 1, weak: 1), Change(at: 0.1, .off)])
    }

    /// A write that failed with a device error as the pad was going (a Bluetooth link answers `EIO` while it drops,
    /// USB `ESHUTDOWN`), then the hot-plug watch's removal: the pad's return resets the engine onto it, as after an
    /// unplug. (The removal was ignored once the engine had stopped for the error, and so was the return: the
    /// engine stayed stopped until the app started it again.)
    @Test func aDeviceErrorThenTheDevicesRemovalIsResetByItsReturn() throws {
        let rig = try Rig()
        let reasons = Inbox<HapticEngineStoppedReason>()
        let resets = Inbox<Double>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        rig.engine.resetHandler = { [clock = rig.clock] in resets.put(clock.now) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        rig.recorder.failNext(.other)
        try player.start(atTime: 0)
        #expect(reasons.all == [.deviceError])
        rig.recorder.unplug()
        rig.recorder.replug()
        #expect(resets.all.count == 1, "the return reset the engine")
        #expect(rig.engine.isRunning)
        #expect(reasons.all == [.deviceError], "the handler heard of the stop once")
    }

    @Test func idleEngineShutsDownAndRestartsOnThePlay() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 2
        let rig = try Rig(options: options)
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.5)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(reasons.all.isEmpty)
        rig.clock.advance(by: 2)
        #expect(reasons.all == [.idleTimeout])
        #expect(rig.recorder.records().last?.time == 12.5)
        #expect(rig.actions().last == .close)
        try player.start(atTime: 0)
        #expect(rig.engine.isRunning)
        #expect(Array(rig.actions().suffix(2)) == [.open, .apply(MotorMagnitudes(strong: 1, weak: 0))])
    }

    /// The device released when the engine idled took the prepared pulse with it: the play that opens it again
    /// uploads the pulse again and triggers it, and so does every later play, one write each (until 6 December
    /// every play after an idle shutdown went through the mix, an upload and a play).
    @Test func aPreparedPulseIsPreparedAgainWhenAnIdleEngineOpensTheDeviceAgain() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 2
        let rig = try Rig(options: options)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        #expect(try player.prepare())
        try player.start(atTime: 0)
        rig.clock.advance(by: 3)
        #expect(rig.actions().last == .close)
        let before = rig.actions().count
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(Array(rig.actions().dropFirst(before)) == [.open, .prepare(id: 1), .trigger(id: 1), .trigger(id: 1)])
        // A stopped engine let its preparations go on purpose: a start does not make them again.
        rig.engine.stop()
        try rig.engine.start()
        let afterStop = rig.actions().count
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(!rig.actions().dropFirst(afterStop).contains { if case .prepare = $0 { true } else { false } })
    }

    /// A device error stops the engine with its players usable: the play that starts it again prepares the pulse
    /// prepared before on the device it opens.
    @Test func aPreparedPulseIsPreparedAgainWhenAPlayStartsTheEngineAfterADeviceError() throws {
        let rig = try Rig()
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let prepared = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        #expect(try prepared.prepare())
        let other = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        rig.recorder.failNext(.other)
        try other.start(atTime: 0)
        #expect(reasons.all == [.deviceError])
        let before = rig.actions().count
        try prepared.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(Array(rig.actions().dropFirst(before)) == [.open, .prepare(id: 1), .trigger(id: 1)])
    }

    @Test func preparedPulseStartsWithOneTrigger() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        #expect(try player.prepare())
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.actions() == [.open, .prepare(id: 0), .trigger(id: 0)])
        #expect(player.phase == .finished)
    }

    @Test func aPatternOpeningWithARampIsNotPrepared() throws {
        let rig = try Rig()
        let ramp = MotorTimeline.Segment(
            start: 0, end: 0.1, startLevels: .off, endLevels: MotorMagnitudes(strong: 1, weak: 0))
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(ramp))
        #expect(try !player.prepare())
    }

    @Test func aPreparedFlatTopHandsTheRestToTheMix() throws {
        let rig = try Rig()
        let decay = MotorTimeline.Segment(
            start: 0.04, end: 0.08, startLevels: MotorMagnitudes(strong: 0.5, weak: 0), endLevels: .off)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.04), decay))
        #expect(try player.prepare())
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        // The pulse is stopped before the mix's first command: a device that rounds the pulse's replay up to
        // its next tick would otherwise play the flat top and the decay summed for that tick.
        let decayPlan = planned(timeline(decay))
        let first = try #require(decayPlan.first)
        let firstLevels = try #require(
            DeviceCommandPlanner(profile: .genericRumble).commands(for: timeline(decay)).first?.levels)
        #expect(
            Array(rig.actions().prefix(5)) == [
                .open, .prepare(id: 0), .trigger(id: 0), .stop(id: 0), .apply(firstLevels),
            ])
        // The mix plays the decay alone (the pulse covers the flat top), as the planner sends it: from the pulse's
        // end, at the decay's level in the middle of its first hold.
        #expect(rig.applied() == decayPlan)
        #expect(first.time == 40_000 && first.strong < 500 && first.strong > 250 && first.weak == 0)
    }

    @Test func aPulseOverlappedByAnotherPlayerIsNotCutShort() throws {
        let rig = try Rig()
        let tap = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        let hum = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.2, 0.2, to: 0.3)))
        #expect(try tap.prepare())
        try tap.start(atTime: 0)
        try hum.start(atTime: 10.05)
        rig.clock.advance(by: 1)
        // The hum's commands come while the tap plays (summed on the device, as they should be) and long after
        // it ended: neither stops it.
        #expect(!rig.actions().contains(.stop(id: 0)))
        #expect(rig.applied() == [Change(at: 0.05, strong: q(0.2), weak: q(0.2)), Change(at: 0.35, .off)])
    }

    @Test func aSingleSlotDeviceDegradesToTheMix() throws {
        let rig = try Rig(effectSlots: 1)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
        #expect(try !player.prepare())
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: q(0.7), weak: q(0.3)), Change(at: 0.1, .off)])
    }

    @Test func notifyWhenPlayersFinishedCanStopTheEngine() throws {
        let rig = try Rig()
        let calls = Inbox<Double>()
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.3)))
        try player.start(atTime: 0)
        rig.engine.notifyWhenPlayersFinished { [clock = rig.clock] _ in
            calls.put(clock.now)
            return .stopEngine
        }
        rig.clock.advance(by: 1)
        #expect(calls.all == [10.3])
        #expect(!rig.engine.isRunning)
        #expect(reasons.all == [.notifyWhenFinished], "the stopped handler hears why, as in Core Haptics")
        #expect(rig.actions().last == .close)
    }

    /// An idle delay that is not a positive number is refused when the engine starts: 0 or less idled the engine
    /// in the very pass a play's start made, dropping the play without a word (until 6 December).
    @Test(arguments: [0, -1, Double.nan])
    func anIdleDelayThatIsNotPositiveIsRefusedAtStart(delay: Double) throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = delay
        let rig = try Rig(options: options, start: false)
        #expect {
            try rig.engine.start()
        } throws: { error in
            (error as? HapticEngineError)?.kind == .invalidArgument
                && "\(error)".contains("HapticEngineOptions.autoShutdownDelay")
        }
        #expect(rig.actions().isEmpty, "nothing opened")
    }

    /// On an engine that shut itself down (idle), a handler is called at once; its `.stopEngine` stops the engine,
    /// which a play then does not start again, and the stopped handler hears why (until 6 December it heard
    /// nothing, and the app's next play threw `notRunning` where it had been starting the engine again).
    @Test func aStopEngineFromAPlayersFinishedHandlerOnAnIdleEngineIsReported() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 0.2
        let rig = try Rig(options: options)
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(reasons.all == [.idleTimeout])
        rig.engine.notifyWhenPlayersFinished { _ in .stopEngine }
        #expect(reasons.all == [.idleTimeout, .notifyWhenFinished])
        #expect { try player.start(atTime: 0) } throws: { ($0 as? HapticEngineError)?.kind == .notRunning }
    }

    /// Two handlers waiting are each called once, in order; one `.stopEngine` among them stops the engine once
    /// (until 6 December the second call dropped the first handler).
    @Test func everyPlayersFinishedHandlerWaitingIsCalledOnce() throws {
        let rig = try Rig()
        let calls = Inbox<String>()
        let reasons = Inbox<HapticEngineStoppedReason>()
        rig.engine.stoppedHandler = { reasons.put($0) }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.5)))
        try player.start(atTime: 0)
        rig.engine.notifyWhenPlayersFinished { _ in
            calls.put("first")
            return .stopEngine
        }
        rig.engine.notifyWhenPlayersFinished { _ in
            calls.put("second")
            return .leaveEngineRunning
        }
        rig.clock.advance(by: 1)
        #expect(calls.all == ["first", "second"])
        #expect(!rig.engine.isRunning)
        #expect(reasons.all == [.notifyWhenFinished])
    }

    /// A handler waiting when the pad is lost is called then, with the error (Core Haptics passes one when its
    /// players stopped on an error); its `.stopEngine` stops the interrupted engine, which then is not reset when
    /// the pad returns. One that answers `.leaveEngineRunning` lets the reset come. Until 6 December the handler
    /// waited for the return, was called then without an error, and stopped the engine the reset brought back.
    @Test(arguments: [HapticEngineFinishedAction.stopEngine, .leaveEngineRunning])
    func aPlayersFinishedHandlerWaitingWhenThePadIsLostIsCalledThenWithTheError(
        action: HapticEngineFinishedAction
    ) throws {
        let (rig, events) = try Self.playersFinishedRig(playing: 2) { _ in action }
        rig.clock.advance(by: 0.5)
        rig.recorder.unplug()
        rig.clock.advance(by: 0.5)
        #expect(events.all.contains("finished noDevice"), "\(events.all)")
        rig.recorder.replug()
        rig.clock.advance(by: 0.5)
        #expect(events.all.filter { $0.hasPrefix("finished") }.count == 1, "\(events.all)")
        if action == .stopEngine {
            #expect(!events.all.contains("reset") && !rig.engine.isRunning, "\(events.all)")
        } else {
            #expect(events.all.last == "reset" && rig.engine.isRunning, "\(events.all)")
        }
    }

    /// A players-finished handler whose players finished, answering `.stopEngine` after the pad went and came back
    /// meanwhile (here from within the handler, as the hot-plug thread would): the engine the reset brought back runs
    /// on. Until 7 December the handler stopped it.
    @Test func aFinishedHandlerDoesNotStopTheEngineAResetBroughtBackMeanwhile() throws {
        let (rig, events) = try Self.playersFinishedRig(playing: 0.3) { recorder in
            recorder.unplug()
            recorder.replug()
            return .stopEngine
        }
        rig.clock.advance(by: 1)
        #expect(events.all.contains("reset"), "\(events.all)")
        #expect(rig.engine.isRunning, "the handler stopped the engine the reset brought back: \(events.all)")
    }

    /// A players-finished handler told of an unplug, answering `.stopEngine` after the pad came back (a reset) and
    /// went again meanwhile: the second interruption is not stopped, and the pad's next return resets the engine.
    /// Until 7 December the handler stopped it, and no reset came.
    @Test func aFinishedHandlerOfTheFirstUnplugDoesNotStopTheSecondInterruption() throws {
        let (rig, events) = try Self.playersFinishedRig(playing: 2) { recorder in
            recorder.replug()
            recorder.unplug()
            return .stopEngine
        }
        rig.clock.advance(by: 0.5)
        rig.recorder.unplug()
        rig.clock.advance(by: 0.5)
        rig.recorder.replug()
        rig.clock.advance(by: 0.5)
        #expect(events.all.filter { $0 == "reset" }.count == 2, "\(events.all)")
        #expect(rig.engine.isRunning, "the first unplug's handler stopped the second interruption: \(events.all)")
    }

    /// An engine playing a player `seconds` long from now, whose stopped and reset handlers and a players-finished
    /// handler (its answer `answer`'s, given the output to act on first) tell `events` ("stopped REASON", "reset",
    /// "finished nil" or "finished KIND").
    static func playersFinishedRig(
        playing seconds: Double, answer: @escaping @Sendable (RecordingOutput) -> HapticEngineFinishedAction
    ) throws -> (Rig, Inbox<String>) {
        let rig = try Rig()
        let events = Inbox<String>()
        rig.engine.stoppedHandler = { events.put("stopped \($0.rawValue)") }
        rig.engine.resetHandler = { events.put("reset") }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: seconds)))
        try player.start(atTime: 0)
        rig.engine.notifyWhenPlayersFinished { [recorder = rig.recorder] error in
            events.put("finished \(error.map { "\($0.kind)" } ?? "nil")")
            return answer(recorder)
        }
        return (rig, events)
    }

    /// As in Core Haptics: with no player active the handler is called at once (on a running engine, at its next
    /// pass; on a stopped one, before the call returns), and a handler still waiting when the engine stops is
    /// called then and does not outlive the stop into the next start.
    @Test func notifyWhenPlayersFinishedWithNothingPlayingOrAStoppedEngineIsCalledAtOnce() throws {
        let rig = try Rig()
        let calls = Inbox<Double>()
        rig.engine.notifyWhenPlayersFinished { [clock = rig.clock] _ in
            calls.put(clock.now)
            return .leaveEngineRunning
        }
        rig.clock.advance(by: 0.01)
        #expect(calls.all == [10], "a running engine with nothing to play")
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 5)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.5)
        rig.engine.notifyWhenPlayersFinished { [clock = rig.clock] _ in
            calls.put(clock.now)
            return .stopEngine
        }
        rig.engine.stop()
        #expect(calls.all == [10, 10.51], "a handler waiting when the engine stops")
        try rig.engine.start()
        try player.start(atTime: 0)
        rig.clock.advance(by: 6)
        #expect(rig.engine.isRunning, "the old handler's .stopEngine did not outlive the stop")
        rig.engine.stop()
        rig.engine.notifyWhenPlayersFinished { [clock = rig.clock] _ in
            calls.put(clock.now)
            return .stopEngine
        }
        #expect(calls.all.count == 3 && abs(calls.all[2] - 16.51) < 1e-9, "a stopped engine: \(calls.all)")
    }

    @Test func stopReleasesTheOutputAndStartReopensIt() throws {
        let rig = try Rig()
        let done = Inbox<Bool>()
        rig.engine.stop { done.put($0 == nil) }
        #expect(done.all == [true])
        #expect(rig.actions() == [.open, .apply(.off), .close])
        try rig.engine.start()
        #expect(rig.engine.isRunning)
    }

    /// A completion handler is a property of its player, as in Core Haptics: set once, it hears of the play cut
    /// off by a stop, and of the next play after the engine started again; so after a device error.
    @Test func aPlayersCompletionHandlerOutlivesAStopAndADeviceError() throws {
        let rig = try Rig()
        let told = Inbox<String>()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        player.completionHandler = { told.put($0.map { "\($0.kind)" } ?? "finished") }
        try player.start(atTime: 0)
        rig.engine.stop()
        try rig.engine.start()
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(told.all == ["notRunning", "finished"])
        rig.recorder.failNext(.noSlot)
        try player.start(atTime: 0)
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(told.all == ["notRunning", "finished", "deviceError", "finished"])
    }

    /// Core Haptics' `playPattern(from:)` starts a stopped engine itself; so does this one.
    @Test func playPatternFromAFileStartsAStoppedEngine() throws {
        let rig = try Rig()
        rig.engine.stop()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("play-\(UUID().uuidString).ahap")
        try Data(#"{"Pattern":[{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.1}}]}"#.utf8)
            .write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try rig.engine.playPattern(from: file)
        #expect(rig.engine.isRunning)
        rig.clock.advance(by: 1)
        #expect(rig.applied().contains { $0.strong > 0 }, "\(rig.applied())")
    }

    @Test func releasingARunningEngineReportsEngineDestroyed() throws {
        let reasons = Inbox<HapticEngineStoppedReason>()
        let recorder = RecordingOutput()
        do {
            let engine = HapticEngine(output: .recording(recorder), clock: ManualClock(), logger: quietLogger())
            engine.stoppedHandler = { reasons.put($0) }
            try engine.start()
        }
        #expect(reasons.all == [.engineDestroyed])
        #expect(recorder.records().last?.action == .close)
    }

    /// Every command of a destroyed engine's player fails with `notRunning`, saying so (until 6 December a stop,
    /// seek, parameter or cancel returned normally and changed a player no engine would play), and nothing
    /// reaches the output after its close.
    @Test func aDestroyedEnginesPlayerRefusesEveryCommand() throws {
        let recorder = RecordingOutput()
        var engine: HapticEngine? = HapticEngine(
            output: .recording(recorder), clock: ManualClock(), logger: quietLogger())
        try engine!.start()
        let player = try engine!.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 1)))
        try player.start(atTime: 0)
        engine = nil
        let parameter = HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0)
        let commands: [(String, () throws(HapticEngineError) -> Void)] = [
            ("start", { () throws(HapticEngineError) in try player.start(atTime: 0) }),
            ("stop", { () throws(HapticEngineError) in try player.stop(atTime: 0) }),
            ("pause", { () throws(HapticEngineError) in try player.pause(atTime: 0) }),
            ("resume", { () throws(HapticEngineError) in try player.resume(atTime: 0) }),
            ("seek", { () throws(HapticEngineError) in try player.seek(toOffset: 0.5) }),
            ("parameters", { () throws(HapticEngineError) in try player.sendParameters([parameter], atTime: 0) }),
            ("cancel", { () throws(HapticEngineError) in try player.cancel() }),
        ]
        for (name, command) in commands {
            #expect(throws: HapticEngineError(.notRunning, "the engine was destroyed"), "\(name)") { try command() }
        }
        #expect(recorder.records().last?.action == .close)
    }

    /// Holds the handler `install` sets on the thread `trigger` runs on, calls `stop()` on another thread
    /// meanwhile, then lets the handler return: what returned first. The handler is let go only once the stop has
    /// stopped everything (the engine's phase says so), after which nothing but its wait for the handler stands
    /// before its return, and 50 ms later: a stop that did not wait would have returned first.
    static func stopAgainstABlockedHandler(
        _ rig: Rig, install: (@escaping @Sendable () -> Void) -> Void, trigger: @escaping @Sendable () -> Void
    ) throws -> [String] {
        let order = Inbox<String>()
        let entered = DeadlineWaiter()
        let release = DeadlineWaiter()
        install {
            entered.signal()
            release.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
            order.put("handler returned")
        }
        let triggering = try ServiceThread.start(trigger)
        entered.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        let stopping = try ServiceThread.start { [engine = rig.engine] in
            engine.stop()
            order.put("stop returned")
        }
        let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
        while rig.engine.core.state.withLock({ $0.phase }) != .stopped {
            guard MonotonicTime.nanoseconds() < deadline else {
                Issue.record("the stop did not stop the engine within 10 s")
                break
            }
            Sys.sleep(nanoseconds: 1_000_000)
        }
        Sys.sleep(nanoseconds: 50_000_000)
        release.signal()
        stopping.join()
        triggering.join()
        return order.all
    }

    /// An unplug's stopped handler, running on its thread, and `stop()` made meanwhile on another: the stop
    /// returns only once the handler has, so a caller may rely on no handler running after its stop.
    @Test func stopReturnsOnlyAfterAStoppedHandlerThatBeganBeforeIt() throws {
        let rig = try Rig()
        let order = try Self.stopAgainstABlockedHandler(
            rig, install: { handler in rig.engine.stoppedHandler = { _ in handler() } },
            trigger: { [recorder = rig.recorder] in recorder.unplug() })
        #expect(order == ["handler returned", "stop returned"])
    }

    /// The same for a replug's reset handler.
    @Test func stopReturnsOnlyAfterAResetHandlerThatBeganBeforeIt() throws {
        let rig = try Rig()
        rig.recorder.unplug()
        let order = try Self.stopAgainstABlockedHandler(
            rig, install: { handler in rig.engine.resetHandler = handler },
            trigger: { [recorder = rig.recorder] in recorder.replug() })
        #expect(order == ["handler returned", "stop returned"])
        #expect(!rig.engine.isRunning)
    }

    /// A player's completion, cut off by an unplug, is called on the unplugging thread before the stopped
    /// handler; when it stops the engine, that stop must not wait for the handler its own thread has yet to
    /// call (it waited for ever).
    @Test func aCompletionThatStopsTheEngineBeforeItsThreadsStoppedHandlerReturns() throws {
        let rig = try Rig()
        let told = Inbox<String>()
        rig.engine.stoppedHandler = { _ in told.put("stopped handler") }
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 5)))
        let stopReturned = DeadlineWaiter()
        player.completionHandler = { [engine = rig.engine] _ in
            engine.stop()
            told.put("stop returned")
            stopReturned.signal()
        }
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.1)
        let unplugging = try ServiceThread.start { [recorder = rig.recorder] in recorder.unplug() }
        stopReturned.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        #expect(told.all.first == "stop returned", "the completion's stop waits for its own thread's handler")
        // A thread that waits for itself for ever cannot be joined.
        guard told.all.first == "stop returned" else { return }
        unplugging.join()
        #expect(told.all == ["stop returned", "stopped handler"])
    }

    /// Two engines unplugged at once whose stopped handlers each stop the other engine: a stop from within a
    /// handler waits for no other handler, so both return (rather than each waiting for the other for ever).
    @Test func twoHandlersStoppingEachOthersEnginesBothReturn() throws {
        let first = try Rig()
        let second = try Rig()
        let engines = [first.engine, second.engine]
        let entered = [DeadlineWaiter(), DeadlineWaiter()]
        let returned = Inbox<Int>()
        let bothReturned = DeadlineWaiter()
        for index in 0..<2 {
            engines[index].stoppedHandler = { [other = engines[1 - index]] _ in
                entered[index].signal()
                entered[1 - index].wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
                entered[1 - index].signal()
                other.stop()
                returned.put(index)
                if returned.all.count == 2 { bothReturned.signal() }
            }
        }
        let unplugging = try [first.recorder, second.recorder].map { recorder in
            try ServiceThread.start { recorder.unplug() }
        }
        bothReturned.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        #expect(returned.all.sorted() == [0, 1], "the handlers' stops wait for each other")
        // Threads that wait for each other for ever cannot be joined.
        guard returned.all.count == 2 else { return }
        for thread in unplugging { thread.join() }
        // Each handler holds the other engine: let them go, or the two engines hold each other for ever.
        for engine in engines { engine.stoppedHandler = nil }
    }
}
