// The scheduler with plain numbers: players added and advanced together, what happened and when the next
// change is, the revision that makes a plan stale and the instant a plan must start from, and ids that never
// repeat across a reset.
import HapticRendering
import Testing

@testable import LinuxHaptics

@Suite struct PlaybackSchedulerTests {
    static func player(seconds: Double) -> PlayerState { PlayerState(timeline: timeline(pulse(1, 1, to: seconds))) }

    @Test func advancingAppliesDueStartsAndEndsAndNamesTheNextChange() {
        var scheduler = PlaybackScheduler()
        let short = scheduler.add(Self.player(seconds: 1))
        let long = scheduler.add(Self.player(seconds: 3))
        scheduler.withPlayer(short) { $0.schedule(.start, at: 10) }
        scheduler.withPlayer(long) { $0.schedule(.start, at: 10.5) }
        var step = scheduler.advance(to: 10)
        #expect(step.events.isEmpty)
        #expect(step.nextChange == 10.5, "the long player's queued start")
        #expect(step.isActive)
        step = scheduler.advance(to: 11)
        #expect(step.events.map(\.player) == [short] && step.events.map(\.event) == [.finished])
        #expect(step.nextChange.map { abs($0 - 13.5) < 1e-6 } == true, "the long player's end")
        step = scheduler.advance(to: 14)
        #expect(step.events.map(\.player) == [long])
        #expect(step.nextChange == nil && !step.isActive)
    }

    @Test func aLongMixIsPlannedUpToItsFirstCommandPastTwoSecondsAndSoIsASoloPlan() throws {
        // A 7 s ramp: the pass's plan ends with the whole plan's first command at or past 2 s, which is its
        // horizon; so does the plan a start takes from a player made alone, its times from its start.
        let ramp = timeline(
            MotorTimeline.Segment(
                start: 0, end: 7, startLevels: .init(strong: 0.1, weak: 0.1), endLevels: .init(strong: 0.9, weak: 0.7)))
        var scheduler = PlaybackScheduler()
        let id = scheduler.add(PlayerState(timeline: ramp))
        scheduler.withPlayer(id) { $0.schedule(.start, at: 10) }
        _ = scheduler.advance(to: 10)
        let planner = DeviceCommandPlanner(profile: .genericRumble)
        let whole = planner.commands(for: ramp)
        let k = try #require(whole.firstIndex { $0.time >= 2 })
        let plan = scheduler.plan(from: 10, resuming: .deviceOff, planner: planner, locality: .all)
        #expect(plan.commands.map(\.levels) == whole[...k].map(\.levels))
        #expect(plan.horizon.map { abs($0 - 10 - whole[k].time) < 1e-9 } == true)
        let solo = PlaybackScheduler.soloPlan(of: ramp, planner: planner, locality: .all)
        #expect(solo.commands.map(\.levels) == whole[...k].map(\.levels))
        #expect(solo.commands.map(\.time) == whole[...k].map(\.time))
        #expect(solo.horizon == whole[k].time && PlayerOpening(plan: solo).horizon == whole[k].time)
    }

    @Test func playersWhoseSumCrossesFullAreMixedAtFullFromTheCrossingOn() {
        // A ramp from off to full beside a steady half: the sum crosses full halfway. The mix is full from there on,
        // as the renderer mixes overlapping events (`MotorTimeline.mixed`); it clamped only the ends of each stretch
        // between two players' breakpoints, drawing a straight line from 0.5 to full beneath the sum, 0.75 halfway,
        // until 7 December.
        let ramp = timeline(
            MotorTimeline.Segment(start: 0, end: 1, startLevels: .off, endLevels: .init(strong: 1, weak: 0)))
        var scheduler = PlaybackScheduler()
        for player in [PlayerState(timeline: ramp), PlayerState(timeline: timeline(pulse(0.5, 0, to: 1)))] {
            let id = scheduler.add(player)
            scheduler.withPlayer(id) { $0.schedule(.start, at: 10) }
        }
        _ = scheduler.advance(to: 10)
        let mix = scheduler.mixedTimeline(from: 10, span: 1, locality: .all)
        for (time, strong) in [(0.25, 0.75), (0.5, 1.0), (0.75, 1.0), (0.999, 1.0)] {
            #expect(abs(mix.levels(at: time).strong - strong) < 1e-9, "at \(time): \(mix.levels(at: time))")
        }
    }

    @Test func aLoopComingRoundFasterThanAMillisecondIsMixedAsItsMeanHeldAndASlowerOnePassByPass() throws {
        // A one-second loop, full for half of it and 0.2 for the rest, at playback rates of 100,000 (10 µs a pass)
        // and 100 (10 ms a pass), mixed over 2.25 s as a plan of a loop mixes it. The first is its mean, one
        // segment; mixed pass by pass, it was 450,000 segments. The second is its passes: two segments each.
        let swing = timeline(pulse(1, 1, to: 0.5), pulse(0.2, 0.2, from: 0.5, to: 1))
        for (rate, segments) in [(100_000.0, 1), (100, 450)] {
            var scheduler = PlaybackScheduler()
            let id = scheduler.add(PlayerState(timeline: swing))
            scheduler.withPlayer(id) { player in
                player.setLoopEnabled(true, at: 10)
                player.schedule(.start, at: 10)
            }
            _ = scheduler.advance(to: 10)
            scheduler.withPlayer(id) { $0.setRate(rate, now: 10) }
            let mix = scheduler.mixedTimeline(from: 10, span: 2.25, locality: .all)
            #expect(mix.segments.count == segments, "rate \(rate)")
            let mean = mix.mean(from: 0, to: 2.25)
            #expect(abs(mean.strong - 0.6) < 1e-9 && abs(mean.weak - 0.6) < 1e-9, "rate \(rate): \(mean)")
            // Where a plan is made again across a horizon, the level it continues from is the same mix's.
            let before = scheduler.mixedLevels(justBefore: 10.5, locality: .all)
            let expected = rate < 1000 ? 0.2 : 0.6
            #expect(abs(before.strong - expected) < 1e-9 && abs(before.weak - expected) < 1e-9, "rate \(rate)")
        }
    }

    @Test func aChangeMakesThePlanStaleFromTheEarliestInstantItTookEffect() {
        var scheduler = PlaybackScheduler()
        let id = scheduler.add(Self.player(seconds: 1))
        let before = scheduler.revision
        scheduler.withPlayer(id) { $0.schedule(.start, at: 10) }
        scheduler.invalidate(at: 10.2)
        scheduler.invalidate(at: 10.1)
        #expect(scheduler.revision != before)
        #expect(scheduler.consumeChanges() == 10.1)
        #expect(scheduler.consumeChanges() == nil, "taken by the plan made from it")
        let planned = scheduler.revision
        _ = scheduler.advance(to: 10.3)
        #expect(scheduler.revision != planned, "the start applied late still changes the mix")
        #expect(scheduler.consumeChanges() == 10, "from the start's own instant, not the pass's")
    }

    @Test func aPassWithNothingDueLeavesTheRevisionAlone() {
        var scheduler = PlaybackScheduler()
        let id = scheduler.add(Self.player(seconds: 1))
        scheduler.withPlayer(id) { $0.schedule(.start, at: 10) }
        _ = scheduler.advance(to: 10)
        _ = scheduler.consumeChanges()
        let revision = scheduler.revision
        _ = scheduler.advance(to: 10.5)
        #expect(scheduler.revision == revision)
    }

    @Test func releasedPlayersGoOnceFinishedAndIdsNeverRepeatAcrossAReset() {
        var scheduler = PlaybackScheduler()
        let playing = scheduler.add(Self.player(seconds: 1))
        let idle = scheduler.add(Self.player(seconds: 1))
        scheduler.withPlayer(playing) {
            $0.schedule(.start, at: 0)
            $0.isOrphaned = true
        }
        scheduler.withPlayer(idle) { $0.isOrphaned = true }
        _ = scheduler.advance(to: 0.5)
        #expect(scheduler.removeFinishedOrphans() == [idle], "the playing one plays to its end first")
        _ = scheduler.advance(to: 2)
        #expect(scheduler.removeFinishedOrphans() == [playing])
        scheduler.forgetPlayers()
        let fresh = scheduler.add(Self.player(seconds: 1))
        #expect(fresh != playing && fresh != idle && fresh > idle)
    }

    @Test func haltingStopsEveryPlayerWithoutEvents() {
        var scheduler = PlaybackScheduler()
        let id = scheduler.add(Self.player(seconds: 1))
        scheduler.withPlayer(id) { $0.schedule(.start, at: 0) }
        _ = scheduler.advance(to: 0.1)
        scheduler.haltAll()
        #expect(scheduler.players[id]?.phase == .stopped)
        #expect(scheduler.advance(to: 5).events.isEmpty)
        #expect(!scheduler.isActive)
    }
}
