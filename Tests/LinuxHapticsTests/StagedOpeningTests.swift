// A player made while the device is quiet has its opening staged (`EngineState.stageOpening`): a start now then
// writes it after one lock and a few comparisons worked out ahead, and plans nothing before that write. Anything
// that makes the staged opening the wrong first write (another player started, a pulse triggered, haptics muted,
// the output reopened) sends the start the ordinary way, which decides as before.
import HapticRendering
@testable import LinuxHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct StagedOpeningTests {
    private func staged(_ rig: Rig) -> StagedOpening? { rig.engine.core.state.withLock { $0.stagedOpening } }

    @Test func aStartOfTheStagedOpeningWritesItAndThenFollowsItsPlan() throws {
        let rig = try Rig()
        let tap = timeline(pulse(0.6, 0.2, to: 0.05))
        let player = try rig.engine.makeAdvancedPlayer(timeline: tap)
        #expect(staged(rig)?.levels == MotorMagnitudes(strong: q(0.6), weak: q(0.2)))
        try player.start(atTime: 0)
        #expect(staged(rig) == nil, "taken by the start")
        #expect(rig.applied() == [Change(at: 0, strong: q(0.6), weak: q(0.2))], "written before the call returned")
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(tap))
        #expect(player.phase == .finished)
    }

    private func armedPlayer(_ rig: Rig) -> PlayerID? {
        rig.engine.core.state.withLock { state in
            state.stagedOpening.map(\.player).flatMap { state.stagedStart.mayFire(for: $0) ? $0 : nil }
        }
    }

    @Test func aStagedStartWritesItsOpeningWhileAnotherThreadHoldsTheEngineState() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 0.05)))
        // The playback thread's part of a pass, or another player's change, holds the state lock meanwhile.
        let writtenUnderTheLock = try rig.whileTheEngineStateIsHeld(start: { try? player.start(atTime: 0) }) {
            rig.applied().isEmpty ? nil : rig.applied()
        }
        #expect(writtenUnderTheLock == [Change(at: 0, strong: q(0.6), weak: q(0.2))])
        rig.clock.advance(by: 1)
        #expect(player.phase == .finished)
    }

    @Test func theStagedStartIsArmedOnlyWhileItsOpeningIsWhatAStartNowWrites() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 0.05)))
        let id = try #require(staged(rig)).player
        #expect(armedPlayer(rig) == id, "armed once the output bound its trigger")
        rig.engine.isMutedForHaptics = true
        #expect(armedPlayer(rig) == nil, "haptics muted")
        rig.engine.isMutedForHaptics = false
        let other = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.3, 0, to: 0.05)))
        #expect(armedPlayer(rig) != id, "another opening staged in its place")
        #expect(try other.prepare())
        #expect(armedPlayer(rig) == nil, "the staged player has a prepared pulse to trigger instead")
        let third = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.4, 0, to: 0.05)))
        let thirdID = try #require(staged(rig)).player
        #expect(armedPlayer(rig) == thirdID)
        try player.stop(atTime: 0)
        #expect(armedPlayer(rig) == nil, "the mix changed since it was staged (a command for another player)")
        withExtendedLifetime(third) {}
        withExtendedLifetime(player) {}
    }

    /// A caller that sets a player's rate, loop and offset before its start, as `haptics play` does, to what they
    /// already are, changes nothing: the mix is not planned again and the start stays armed, one write.
    @Test func settingsLeftAsTheyWereKeepAnIdlePlayersStartArmed() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 0.05)))
        let id = try #require(staged(rig)).player
        let revision = rig.engine.core.state.withLock { $0.scheduler.revision }
        player.playbackRate = 1
        player.loopEnabled = false
        try player.seek(toOffset: 0)
        #expect(rig.engine.core.state.withLock { $0.scheduler.revision } == revision, "no plan made again")
        #expect(armedPlayer(rig) == id)
        try player.start(atTime: 0)
        #expect(staged(rig) == nil, "taken by the start")
        #expect(rig.applied() == [Change(at: 0, strong: q(0.6), weak: q(0.2))])
    }

    /// An offset that moves where an idle player starts makes its staged opening the wrong first write: its start
    /// is no longer armed, and writes the level at the offset.
    @Test func anIdlePlayersStartMovedByASeekIsNoLongerArmed() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(
            timeline: timeline(pulse(0.6, 0.2, to: 0.05), pulse(0.3, 0, from: 0.05, to: 0.2)))
        let id = try #require(staged(rig)).player
        #expect(armedPlayer(rig) == id)
        try player.seek(toOffset: 0.1)
        #expect(armedPlayer(rig) == nil)
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.01)
        #expect(rig.recorder.appliedMixes().first?.mix == MotorMagnitudes(strong: q(0.3), weak: 0))
    }

    @Test func aPlayerMadeWithinTheRateLimitIsArmedFromTheTimeTheDeviceRests() throws {
        let rig = try Rig()
        let first = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 0.05)))
        try first.start(atTime: 0)
        rig.clock.advance(by: 0.051)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.4, 0, to: 0.05)))
        let opening = try #require(staged(rig))
        let (restsFrom, stagedAt) = (opening.restsFrom, opening.stagedAt)
        #expect(restsFrom > stagedAt, "the off at 0.05 and the budget still count")
        #expect(armedPlayer(rig) == opening.player)
        rig.recorder.clearRecords()
        let early = rig.engine.core.state.withLock { state in
            state.stagedStart.fire(of: opening.player, gate: state.startGateToken, now: { restsFrom - 0.001 })
        }
        #expect(early == nil, "not before the device rests")
        #expect(rig.actions().isEmpty)
        let onTime = rig.engine.core.state.withLock { state in
            let fired = state.stagedStart.fire(of: opening.player, gate: state.startGateToken, now: { restsFrom })
            if let fired {
                _ = state.recordStagedStartWent(fired.staged, generation: state.resetGeneration, at: restsFrom)
            }
            return fired
        }
        #expect(onTime?.failure == nil && onTime?.staged.player == opening.player, "from the time it rests")
        #expect(rig.actions() == [.apply(MotorMagnitudes(strong: q(0.4), weak: 0))])
        withExtendedLifetime(player) {}
    }

    @Test(arguments: [RenderProfile.genericRumble, .switchPro, .virtualPad])
    func aLongPatternStartedAloneTakesItsSoloPlanToItsHorizonAndGoesOnPastIt(profile: RenderProfile) throws {
        // A 5 s pattern: the solo plan made with the player ends at its first command at or past 2 s, its horizon.
        // The start writes the staged opening, the engine takes that plan, horizon included, and from the horizon
        // the pass plans again: every command of the whole plan goes out, the last (off) at the end.
        let rig = try Rig(renderProfile: profile)
        let ramp = rampAfterAStep(to: 5, from: .init(strong: 0.1, weak: 0.1), to: .init(strong: 0.9, weak: 0.7))
        let whole = DeviceCommandPlanner(profile: profile).commands(for: ramp)
        let k = try #require(whole.firstIndex { $0.time >= 2 })
        let player = try rig.engine.makeAdvancedPlayer(timeline: ramp)
        #expect(staged(rig)?.levels == whole[0].levels, "\(profile.name)")
        try player.start(atTime: 0)
        #expect(rig.applied() == [Change(at: 0, whole[0].levels)], "\(profile.name): written before the call returned")
        rig.clock.advance(by: 0.1)
        // In engine time, which runs the output's latency ahead of the writes (`switch`: 45 ms).
        let horizon = rig.engine.core.state.withLock { $0.plan?.horizon }
        let expected = 10 + profile.outputLatency + whole[k].time
        #expect(horizon.map { abs($0 - expected) < 1e-9 } == true, "\(profile.name): \(String(describing: horizon))")
        rig.clock.advance(by: 6)
        let sent = rig.applied()
        expectSameChanges(sent, planned(ramp, profile: profile), profile.name)
        #expect(sent.last.map { $0.strong == 0 && $0.weak == 0 } == true)
        #expect(player.phase == .finished)
    }

    @Test func aStartAfterAnotherPlayerStartedWritesTheirMix() throws {
        let rig = try Rig()
        let second = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 1)))
        let first = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.25, 0, to: 1)))
        #expect(staged(rig)?.levels == MotorMagnitudes(strong: q(0.25), weak: 0), "the last made is staged")
        try second.start(atTime: 0)
        try first.start(atTime: 0)
        rig.clock.advance(by: 0.05)
        let mixes = rig.recorder.appliedMixes().map(\.mix)
        #expect(mixes.first == MotorMagnitudes(strong: q(0.5), weak: 0))
        #expect(mixes.last == MotorMagnitudes(strong: q(0.75), weak: 0), "the sum, not the staged 0.25")
    }

    @Test func aPulseTriggeredAfterStagingAndInItsOverrunIsStoppedJustAfterTheStartsOpening() throws {
        let rig = try Rig()
        let prepared = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.02)))
        #expect(try prepared.prepare())
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.4, 0, to: 0.5)))
        #expect(staged(rig)?.levels == MotorMagnitudes(strong: q(0.4), weak: 0))
        try prepared.start(atTime: 0)
        // The pulse's length is over, but the kernel may still be playing it (its replay rounded up to a tick).
        rig.clock.advance(by: 0.0201)
        rig.recorder.clearRecords()
        try player.start(atTime: 0)
        rig.clock.advance(by: rig.engine.renderProfile.minimumUpdateInterval)
        let actions = rig.actions()
        // The opening is the start's first write; the stop follows it at once.
        #expect(actions.prefix(2) == [.apply(MotorMagnitudes(strong: q(0.4), weak: 0)), .stop(id: 0)], "\(actions)")
    }

    @Test func aPlayerMadeInAPulsesOverrunIsStagedAndItsStartStopsThePulseJustAfterTheOpening() throws {
        // The pulse's length is over, but the kernel may still be playing it (its replay rounded up to a tick): the
        // opening is staged all the same, and the start writes it and then stops the pulse, with no plan and no
        // pass before the two writes.
        let rig = try Rig()
        let prepared = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.02)))
        #expect(try prepared.prepare())
        try prepared.start(atTime: 0)
        let pulseID = try #require(
            rig.actions().lazy.compactMap { if case .trigger(let id) = $0 { id } else { nil } }.first)
        rig.clock.advance(by: 0.021)
        let tap = timeline(pulse(0.4, 0, to: 0.5))
        let player = try rig.engine.makeAdvancedPlayer(timeline: tap)
        #expect(staged(rig)?.levels == MotorMagnitudes(strong: q(0.4), weak: 0), "staged in the pulse's overrun")
        rig.recorder.clearRecords()
        let start = rig.clock.now
        try player.start(atTime: 0)
        #expect(staged(rig) == nil, "taken by the start")
        #expect(rig.actions() == [.apply(MotorMagnitudes(strong: q(0.4), weak: 0)), .stop(id: pulseID)])
        rig.clock.advance(by: 1)
        #expect(rig.applied(since: start) == planned(tap))
        #expect(rig.actions().filter { if case .stop = $0 { true } else { false } }.count == 1, "stopped once")
    }

    @Test func anOpeningIsTakenOnceThePulsesLengthIsOverWithThePulseToStopAfterIt() throws {
        // Both ways a start writes its opening before any plan (the armed staged start, or the opening the pass
        // takes on the caller's thread): not while a triggered pulse plays its length; once it is over, with that
        // pulse to stop after the write while the kernel may still play it, and with nothing to stop past its
        // overrun.
        let overrun = OutputTiming.pulseOverrunSeconds
        func withQuietEngine(_ body: (inout EngineState, PlayerID, Double) -> Void) throws {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.4, 0, to: 0.5)))
            let now = rig.clock.now
            rig.engine.core.state.withLock { state in body(&state, state.stagedOpening!.player, now) }
            withExtendedLifetime(player) {}
        }
        func fire(_ state: EngineState, _ id: PlayerID, at time: Double) -> StagedOpening? {
            state.stagedStart.fire(of: id, gate: state.startGateToken, now: { time })?.staged
        }
        try withQuietEngine { state, id, now in
            state.triggeredPulses = [TriggeredPulse(effect: 7, end: now + 0.01)]
            #expect(fire(state, id, at: now) == nil, "within its length")
            let fired = fire(state, id, at: now + 0.01)
            #expect(fired != nil, "its length over")
            let stopping = fired.map {
                state.recordStagedStartWent($0, generation: state.resetGeneration, at: now + 0.01)
            }
            #expect(stopping == [7])
            #expect(state.triggeredPulses.isEmpty, "forgotten once stopped")
        }
        try withQuietEngine { state, id, now in
            state.queueStart(id, at: now, now: now)
            state.triggeredPulses = [TriggeredPulse(effect: 8, end: now + 0.01)]
            #expect(state.takeOpening(of: id, startedAt: now, at: now) == nil, "within its length")
            #expect(state.takeOpening(of: id, startedAt: now, at: now + 0.01 + overrun / 2)?.stopping == [8])
            #expect(state.triggeredPulses.isEmpty)
        }
        try withQuietEngine { state, id, now in
            state.triggeredPulses = [TriggeredPulse(effect: 9, end: now - overrun - 0.001)]
            let fired = fire(state, id, at: now)
            #expect(fired != nil)
            #expect(fired.map { state.recordStagedStartWent($0, generation: state.resetGeneration, at: now) } == [])
            #expect(state.triggeredPulses.isEmpty, "past its overrun: forgotten, not stopped")
        }
    }

    @Test func aStartRecordedAfterAnotherPlayerStartedLeavesTheMixToThePass() throws {
        let rig = try Rig()
        let other = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 1)))
        let started = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.25, 0, to: 1)))
        let now = rig.clock.now
        // Between the opening's write and its record, another thread starts the other player.
        let player = try #require(staged(rig)).player
        let (solo, afterOther) = rig.engine.core.state.withLock { state -> (SoloStart?, Int?) in
            let generation = state.resetGeneration
            let fired = state.stagedStart.fire(of: player, gate: state.startGateToken, now: { now })?.staged
            #expect(fired != nil)
            guard let fired, let otherID = state.scheduler.players.keys.first(where: { $0 != player }) else {
                return (nil, nil)
            }
            #expect(state.stageOpening(of: otherID, at: now) == nil, "the start gone out holds the device")
            state.queueStart(otherID, at: now, now: now)
            #expect(state.recordStagedStartWent(fired, generation: generation, at: now) == [])
            #expect(!state.isQuiet(at: now), "the device holds the opening from the record on")
            return (state.soloStart, state.scheduler.players[player]?.pendingCount)
        }
        #expect(solo == nil, "the pass plans both players' mix, not the staged player's solo commands")
        #expect(afterOther == 1, "the start is queued")
        withExtendedLifetime((other, started)) {}
        rig.clock.advance(by: 0.05)
        #expect(rig.recorder.appliedMixes().map(\.mix).last == MotorMagnitudes(strong: q(0.75), weak: 0))
    }

    @Test func aStartWithHapticsMutedSinceStagingWritesNothing() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.8, 0.8, to: 0.1)))
        #expect(staged(rig) != nil)
        rig.engine.isMutedForHaptics = true
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied().allSatisfy { $0.strong == 0 && $0.weak == 0 }, "\(rig.applied())")
    }

    @Test func anOpeningStagedBeforeTheOutputReopenedIsNotTaken() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.3, 0, to: 0.1)))
        let before = try #require(staged(rig))
        rig.engine.stop()
        try rig.engine.start()
        rig.recorder.clearRecords()
        #expect(
            rig.engine.core.state.withLock { state in
                state.stagedStart.fire(of: before.player, gate: state.startGateToken, now: { rig.clock.now })
            } == nil)
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.recorder.appliedMixes().first?.mix == MotorMagnitudes(strong: q(0.3), weak: 0))
    }
}
