// Players under a manual clock and a recording output: what reaches the output, and when.
import AHAP
import Foundation
import HapticRendering
import LinuxHapticsTesting
import Logging
@_spi(Internals) import LinuxSystem
import Testing

@testable import LinuxHaptics

@Suite struct PlayerTests {
    @Test func startAtTimeSendsTheMixAtItsBreakpoints() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.8, 0.2, to: 0.3)))
        try player.start(atTime: 11)
        rig.clock.advance(by: 2)
        #expect(rig.applied() == [Change(at: 1, strong: 0.8, weak: 0.2), Change(at: 1.3, .off)])
    }

    @Test func timeZeroMeansNow() throws {
        let rig = try Rig()
        let player = try rig.engine.makePlayer(with: HapticPattern(events: [], parameters: []))
        let timed = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        try player.start(atTime: 0)
        try timed.start(atTime: 0)
        #expect(rig.applied() == [Change(at: 0, strong: 1, weak: 1)])
    }

    /// A steady level of 0.5 until `end` played on a rig for `profile`: when the output was renewed (microseconds
    /// after the start), and the rig.
    func renewals(until end: Double, profile: RenderProfile = .genericRumble) throws -> (times: [Int], rig: Rig) {
        let rig = try Rig(renderProfile: profile)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0.5, to: end)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 2)
        let times = rig.recorder.records().filter { $0.action == .keepAlive }.map {
            Change(at: $0.time - 10, .off).time
        }
        return (times, rig)
    }

    @Test func aSteadyLevelIsRenewedBeforeItSelfExpires() throws {
        let (keepAlives, rig) = try renewals(until: 0.22)
        // Every 50 ms while the level holds; none after the off.
        #expect(keepAlives == [50_000, 100_000, 150_000, 200_000])
        #expect(rig.applied().last == Change(at: 0.22, .off))
    }

    @Test func aSteadyLevelOnASwitchPadIsRenewedEvery40Milliseconds() throws {
        // hid-nintendo's frames follow the kernel's end of an effect by up to about 60 ms: its pads get an 80 ms
        // window, renewed every 40 ms.
        #expect(try renewals(until: 0.17, profile: .switchPro).times == [40_000, 80_000, 120_000, 160_000])
    }

    @Test func aRampIsSentWhereThePlannerPlacesItsWrites() throws {
        let rig = try Rig(renderProfile: .everyTwentyMilliseconds)
        let ramp = MotorTimeline.Segment(
            start: 0, end: 0.1, startLevels: .off, endLevels: MotorMagnitudes(strong: 1, weak: 0))
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(ramp))
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        // Holding off from the ramp's start (slope 10 a second) costs the profile's hold error at
        // (3·error/100)^(1/3); then one update per 20 ms (the ramp is steeper than the budget's reference, a full
        // range in a second), each at the level in the middle of its hold (the planner's rule for a drift); off at
        // the end.
        #expect(rig.applied() == planned(timeline(ramp), profile: .everyTwentyMilliseconds))
        let due = pow(3 * RenderProfile.everyTwentyMilliseconds.budget.holdError / 100, 1.0 / 3)
        #expect(
            rig.applied().count == 5,
            "\(due * 1000) ms and three more 20 ms apart, then off at 100 ms (an update due within 20 ms of it waits)")
        let first = try #require(rig.applied().first)
        #expect(abs(Double(first.time) - due * 1e6) < 200, "first update at \(first.time) µs")
        let middle = (Double(first.time) / 1e6 + 0.01) * 10
        #expect(abs(Double(first.strong) / 1000 - middle) <= 0.5 / 255 + 0.001)
    }

    @Test func stopAtTimeCutsThePatternAndCompletes() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 5)))
        let completions = Inbox<String>()
        player.completionHandler = { error in completions.put(error.map { "\($0.kind)" } ?? "ok") }
        try player.start(atTime: 0)
        try player.stop(atTime: 10.25)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: 1, weak: 0), Change(at: 0.25, .off)])
        #expect(completions.all == ["ok"])
        #expect(player.phase == .stopped)
    }

    @Test func aFinishedPlayersCompletionIsCalledOnceEvenWhenTheEngineStopsLater() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.1)))
        let completions = Inbox<String>()
        player.completionHandler = { error in completions.put(error.map { "\($0.kind)" } ?? "ok") }
        let playing = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0, 1, to: 5)))
        let cutOff = Inbox<String>()
        playing.completionHandler = { error in cutOff.put(error.map { "\($0.kind)" } ?? "ok") }
        try player.start(atTime: 0)
        try playing.start(atTime: 0)
        rig.clock.advance(by: 1)
        rig.engine.stop()
        #expect(completions.all == ["ok"], "told once that it finished, not again when the engine stopped")
        #expect(cutOff.all == ["notRunning"], "a player still playing is cut off by the stop")
    }

    @Test func aPlayerThatFinishedBeforeItsScheduledStopIsToldOnceWhenTheEngineStops() throws {
        // The stop falls after the pattern's end: at its time it does nothing to a finished player, so the player
        // waits for no completion, and the engine's stop before that time must not tell it again.
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.1)))
        let completions = Inbox<String>()
        player.completionHandler = { error in completions.put(error.map { "\($0.kind)" } ?? "ok") }
        try player.start(atTime: 0)
        try player.stop(atTime: rig.engine.currentTime + 0.5)
        rig.clock.advance(by: 0.2)
        #expect(completions.all == ["ok"])
        rig.engine.stop()
        #expect(completions.all == ["ok"], "told once that it finished, not again when the engine stopped")
    }

    @Test func aPlayerStartedAgainLaterIsCutOffWhenTheEngineStopsBeforeThatStart() throws {
        // Finished once, with a second start still to come: that start's completion is cut off by the stop.
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.1)))
        let completions = Inbox<String>()
        player.completionHandler = { error in completions.put(error.map { "\($0.kind)" } ?? "ok") }
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.2)
        try player.start(atTime: rig.engine.currentTime + 0.5)
        rig.engine.stop()
        #expect(completions.all == ["ok", "notRunning"])
    }

    @Test func pauseFreezesTheOffsetAndResumeContinues() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 0, to: 0.4), pulse(0, 1, from: 0.4, to: 0.6)))
        try player.start(atTime: 0)
        try player.pause(atTime: 10.3)
        try player.resume(atTime: 11)
        rig.clock.advance(by: 2)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 1, weak: 0), Change(at: 0.3, .off), Change(at: 1, strong: 1, weak: 0),
                Change(at: 1.1, strong: 0, weak: 1), Change(at: 1.3, .off),
            ])
    }

    @Test func seekBeforeStartBeginsThere() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 0, to: 0.4), pulse(0, 1, from: 0.4, to: 0.6)))
        try player.seek(toOffset: 0.5)
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: 0, weak: 1), Change(at: 0.1, .off)])
    }

    @Test func loopingWrapsAtLoopEndUntilStopped() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        player.loopEnabled = true
        player.loopEnd = 0.25
        try player.start(atTime: 0)
        try player.stop(atTime: 10.6)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 1, weak: 1), Change(at: 0.1, .off), Change(at: 0.25, strong: 1, weak: 1),
                Change(at: 0.35, .off), Change(at: 0.5, strong: 1, weak: 1), Change(at: 0.6, .off),
            ])
    }

    @Test func aTransientsEventDurationPadsThePlayerSoThatItEndsAndLoopsThere() throws {
        // One tap with an EventDuration of 1 s: Core Haptics pads the pattern to it, for its end and its loop
        // point. Looping, one tap a second (was: the 40 ms tap again and again, a 2.5 s buzz); alone, it
        // finishes at 1 s (was: 40 ms).
        let tap = HapticPattern(
            events: [HapticEvent(type: .hapticTransient, relativeTime: 0, duration: 1)], parameters: [])
        let rig = try Rig()
        let looping = try rig.engine.makeAdvancedPlayer(with: tap)
        #expect(looping.duration == 1)
        looping.loopEnabled = true
        try looping.start(atTime: 0)
        try looping.stop(atTime: 12.5)
        rig.clock.advance(by: 3)
        let onsets = rig.applied().filter { $0.strong > 0 || $0.weak > 0 }.map(\.time)
        #expect(onsets == [0, 1_000_000, 2_000_000], "\(rig.applied())")
        let once = try rig.engine.makeAdvancedPlayer(with: tap)
        let finished = Inbox<Double>()
        once.completionHandler = { _ in finished.put(rig.engine.currentTime) }
        try once.start(atTime: 0)
        let started = rig.engine.currentTime
        rig.clock.advance(by: 0.5)
        #expect(finished.all.isEmpty, "still playing its padding after its tap")
        rig.clock.advance(by: 1)
        #expect(finished.all.map { abs($0 - started - 1) < 1e-6 } == [true], "\(finished.all)")
    }

    @Test func playbackRateScalesPatternTime() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 1)))
        player.playbackRate = 4
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: 1, weak: 0), Change(at: 0.25, .off)])
    }

    @Test func playersMixBySaturatingSum() throws {
        let rig = try Rig()
        let first = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.1, to: 1)))
        let second = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 0.5)))
        try first.start(atTime: 0)
        try second.start(atTime: 10.25)
        rig.clock.advance(by: 2)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.6), weak: q(0.1)), Change(at: 0.25, strong: 1, weak: q(0.3)),
                Change(at: 0.75, strong: q(0.6), weak: q(0.1)), Change(at: 1, .off),
            ])
    }

    @Test func intensityControlSentLaterScalesFromItsTime() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 0.8, seconds: 1))
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.2)
        try player.sendParameters(
            intensityControl(0.5), atTime: 0)
        rig.clock.advance(by: 2)
        let changes = rig.recorder.appliedMixes()
        let before = try #require(changes.first { $0.time == 10 }).mix
        let after = try #require(changes.first { $0.time == 10.2 }).mix
        #expect(before.strong > 0 && abs(after.strong - before.strong / 2) < 1e-9)
        #expect(abs(after.weak - before.weak / 2) < 1e-9)
        #expect(changes.last.map { $0.time == 11 && $0.mix.isOff } == true)
    }

    @Test func aControlSentForAMomentAfterAQueuedStartActsAtThatMomentOfThePattern() throws {
        // Started at 11, a control for 11.5 sent before: it acts half a second into the pattern (it acted from
        // the start, the offset the player waited at, before 6 December). The same for a curve.
        for curve in [false, true] {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1))
            try player.start(atTime: 11)
            try sendIntensity(0.3, to: player, at: 11.5, asCurve: curve)
            rig.clock.advance(by: 3)
            #expect(
                rig.applied() == [
                    Change(at: 1, strong: 1, weak: 1), Change(at: 1.5, strong: q(0.3), weak: q(0.3)),
                    Change(at: 2, .off),
                ], "curve: \(curve)")
        }
    }

    @Test func aControlSentForAfterThePlayerEndsOrStopsChangesNothingItPlays() throws {
        // A 1 s tone at 0.3 s: a control for after its end, or for after a stop queued at 0.6 s, changes nothing
        // of what plays (placed at the offset a later start would begin from, it acted at once).
        for stops in [false, true] {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1))
            try player.start(atTime: 0)
            rig.clock.advance(by: 0.3)
            if stops { try player.stop(atTime: 10.6) }
            try player.sendParameters(
                intensityControl(0.3),
                atTime: stops ? 10.8 : 12)
            rig.clock.advance(by: 2)
            #expect(
                rig.applied() == [Change(at: 0, strong: 1, weak: 1), Change(at: stops ? 0.6 : 1, .off)],
                "stops: \(stops)")
        }
    }

    @Test func aControlSentWhilePausedForAMomentAfterTheResumeActsAtThatMomentOfThePattern() throws {
        // Paused at 0.5 s of a 2 s tone, its resume queued for 11; a control sent while paused for 11.5 acts at
        // 1 s of the pattern, half a second after the resume (it acted at the resume before 6 December).
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 2))
        try player.start(atTime: 0)
        try player.pause(atTime: 10.5)
        rig.clock.advance(by: 0.6)
        try player.resume(atTime: 11)
        try player.sendParameters(
            intensityControl(0.3), atTime: 11.5)
        rig.clock.advance(by: 3)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 1, weak: 1), Change(at: 0.5, .off), Change(at: 1, strong: 1, weak: 1),
                Change(at: 1.5, strong: q(0.3), weak: q(0.3)), Change(at: 2.5, .off),
            ])
    }

    @Test func aControlSentForLaterLeavesTheOneInEffectActingUntilItsTime() throws {
        // 0.3 from the start (sent after it: the opening went out at full, and 0.3 an interval later); sent at
        // 0.5 s, 0.6 for 2 s: 0.3 holds until then (before 6 December the tone went back to its full level from
        // the second send to 2 s).
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 3))
        try player.start(atTime: 0)
        try player.sendParameters(
            intensityControl(0.3), atTime: 0)
        rig.clock.advance(by: 0.5)
        try player.sendParameters(
            intensityControl(0.6), atTime: 12)
        rig.clock.advance(by: 3)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 1, weak: 1), Change(at: 0.01, strong: q(0.3), weak: q(0.3)),
                Change(at: 2, strong: q(0.6), weak: q(0.6)), Change(at: 3, .off),
            ])
    }

    @Test func intensityControlSentToALoopingPlayerActsFromTheStartOfEveryLaterPass() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 0.8, seconds: 1))
        player.loopEnabled = true
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.3)
        try player.sendParameters(
            intensityControl(0.5), atTime: 0)
        rig.clock.advance(by: 1.5)
        let changes = rig.recorder.appliedMixes()
        let full = try #require(changes.first { $0.time == 10 }).mix
        // From the send on, and through the whole of the next pass (from 11 s), at half: nothing goes back up.
        let later = changes.filter { $0.time >= 10.3 }
        #expect(!later.isEmpty)
        for change in later {
            #expect(abs(change.mix.strong - full.strong / 2) < 1e-9, "\(change.time): \(change.mix)")
        }
    }

    @Test func aControlSentToALoopingPlayerForALaterPassActsFromItsTimeOnly() throws {
        // A 1 s tone looping since 10; at 10.2 an intensity of 0.3 (then a curve to 0.3) is sent for 11.7, in the
        // second pass. The first pass and the second up to 11.7 play at full, 0.3 from then on, the parameter the
        // third pass whole (before 6 December it acted from 10.2, the start of each pass counted as its time, and
        // the curve from 10.7).
        for curve in [false, true] {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1))
            player.loopEnabled = true
            try player.start(atTime: 0)
            rig.clock.advance(by: 0.2)
            try sendIntensity(0.3, to: player, at: 11.7, asCurve: curve)
            rig.clock.advance(by: 2.8)
            let full = Change(at: 0, strong: 1, weak: 1)
            let lowered = Change(at: 1.7, strong: q(0.3), weak: q(0.3))
            // A curve is kept at its pattern time, 0.7 s into the pattern, and plays again from there each pass.
            let again = [Change(at: 2, strong: 1, weak: 1), Change(at: 2.7, strong: q(0.3), weak: q(0.3))]
            #expect(rig.applied() == [full, lowered] + (curve ? again + [Change(at: 3, strong: 1, weak: 1)] : []))
        }
    }

    @Test func controlsHeldForLaterActInTheOrderOfTheirTimesWhateverTheOrderSent() throws {
        // Sent at 10.1: 0.3 for 10.8, then 0.6 for 10.4, then a sharpness of -1 at once (the strong motor alone)
        // on a 1.2 s tone: 0.6 from 10.4 and 0.3 from 10.8, both with the sharpness sent before them.
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1.2))
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.1)
        try player.sendParameters(intensityControl(0.3), atTime: 10.8)
        try player.sendParameters(intensityControl(0.6), atTime: 10.4)
        try player.sendParameters(
            [HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: -1, relativeTime: 0)], atTime: 0)
        rig.clock.advance(by: 2)
        let changes = rig.applied()
        #expect(changes.map(\.time) == [0, 100_000, 400_000, 800_000, 1_200_000])
        let sharp = try #require(changes.dropFirst().first)
        #expect(sharp.weak == 0 && sharp.strong > 0)
        // Scaled from the sharp level, within one 8-bit step (thousandths).
        for (change, scale) in zip(changes.dropFirst(2), [0.6, 0.3]) {
            #expect(change.weak == 0 && abs(Double(change.strong) - scale * Double(sharp.strong)) <= 4, "\(change)")
        }
    }

    @Test func aControlHeldForLaterActsAtItsTimeAfterASeekOrAPauseQueuedSinceItWasSent() throws {
        // A 2 s tone playing since 10; 0.3 sent at 10.1 for 10.8, 0.8 s into the pattern as it stood. Then a seek
        // back to 0 at 10.2, or a pause from 10.3 to 10.5: the player is 0.6 s in at 10.8, and the control acts
        // then (placed where it was sent, at 0.8 s of the pattern, it acted 0.2 s late).
        for seeks in [true, false] {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 2))
            try player.start(atTime: 0)
            rig.clock.advance(by: 0.1)
            try player.sendParameters(
                intensityControl(0.3),
                atTime: 10.8)
            if seeks {
                rig.clock.advance(by: 0.1)
                try player.seek(toOffset: 0)
            } else {
                try player.pause(atTime: 10.3)
                try player.resume(atTime: 10.5)
            }
            rig.clock.advance(by: 3)
            let lowered = Change(at: 0.8, strong: q(0.3), weak: q(0.3))
            let full = Change(at: 0, strong: 1, weak: 1)
            #expect(
                rig.applied()
                    == (seeks
                        ? [full, lowered, Change(at: 2.2, .off)]
                        : [
                            full, Change(at: 0.3, .off), Change(at: 0.5, strong: 1, weak: 1), lowered,
                            Change(at: 2.2, .off),
                        ]),
                "seeks: \(seeks)")
        }
    }

    @Test func aMutedPlayerIsSilentWhilePlayingOnInTimeAndHeardAgainWhereItIsWhenUnmuted() throws {
        // A 1 s tone beside a 0.3-level one: muted from 0.3 s to 0.6 s, only the other is heard then; the tone
        // ends, and completes, at 1 s as unmuted.
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1))
        let other = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.3, 0.3, to: 1.5)))
        let completions = Inbox<Double>()
        player.completionHandler = { [clock = rig.clock] _ in completions.put(clock.now) }
        try player.start(atTime: 0)
        try other.start(atTime: 0)
        rig.clock.advance(by: 0.3)
        player.isMuted = true
        #expect(player.isMuted)
        rig.clock.advance(by: 0.3)
        player.isMuted = false
        rig.clock.advance(by: 1.5)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 1, weak: 1), Change(at: 0.3, strong: q(0.3), weak: q(0.3)),
                Change(at: 0.6, strong: 1, weak: 1), Change(at: 1, strong: q(0.3), weak: q(0.3)), Change(at: 1.5, .off),
            ])
        #expect(completions.all == [11])
    }

    @Test func aMutedPlayersStartWritesNothingThroughItsPulseOrItsOpening() throws {
        for prepared in [false, true] {
            let rig = try Rig()
            let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.7, 0.3, to: 0.1)))
            if prepared { #expect(try player.prepare()) }
            player.isMuted = true
            try player.start(atTime: 0)
            rig.clock.advance(by: 1)
            #expect(
                !rig.actions().contains { if case .trigger = $0 { true } else { false } }, "prepared: \(prepared)")
            #expect(rig.applied().allSatisfy { $0.strong == 0 && $0.weak == 0 }, "prepared: \(prepared)")
            #expect(player.phase == .finished)
        }
    }

    @Test func aControlSentManyTimesKeepsOnlyTheLastAndPlaysAsIfSentOnce() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 0.8, seconds: 10))
        try player.start(atTime: 0)
        for step in 0..<1000 {
            rig.clock.advance(by: 0.001)
            try player.sendParameters(
                [
                    HapticDynamicParameter(
                        parameterID: .hapticIntensityControl, value: Double(step % 2), relativeTime: 0)
                ],
                atTime: 0)
        }
        let controls = try #require(rig.engine.core.state.withLock { $0.scheduler.players.values.first?.controls })
        #expect(controls.parameters.count == 1 && controls.parameters.first?.value == 1)
    }

    @Test func parameterCurveIsRenderedIntoThePlayersTimeline() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1))
        let curve = HapticParameterCurve(
            parameterID: .hapticIntensityControl,
            controlPoints: [.init(relativeTime: 0, value: 1), .init(relativeTime: 0.04, value: 0)], relativeTime: 0)
        try player.start(atTime: 0)
        try player.scheduleParameterCurve(curve, atTime: 0)
        rig.clock.advance(by: 2)
        // The same curve in the pattern itself, rendered and planned: what the device must receive once the curve
        // is known. The start wrote its opening (the pattern's full level) before the curve was scheduled.
        let inPattern = HapticPattern(
            events: continuousPattern(intensity: 1, seconds: 1).events, parameters: [], parameterCurves: [curve])
        let expected = planned(PatternRenderer(profile: .genericRumble).render(inPattern))
        #expect(Array(rig.applied().dropFirst()) == Array(expected.dropFirst()))
        #expect(rig.applied().first == Change(at: 0, strong: 1, weak: 1))
        #expect(expected.count > 2 && expected.last == Change(at: 0.04, .off))
    }

    @Test func sendParametersToATimelineWithoutPatternChangesNothing() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.8, 0.4, to: 1)))
        try player.start(atTime: 0)
        try player.sendParameters(
            intensityControl(0.5), atTime: 10.2)
        rig.clock.advance(by: 2)
        #expect(rig.applied() == [Change(at: 0, strong: 0.8, weak: 0.4), Change(at: 1, .off)])
    }

    @Test func cancelSilencesAtOnceAndReportsCancelled() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 5)))
        let completions = Inbox<HapticEngineError.Kind?>()
        player.completionHandler = { completions.put($0?.kind) }
        try player.start(atTime: 0)
        try player.stop(atTime: 12)
        rig.clock.advance(by: 0.5)
        try player.cancel()
        rig.clock.advance(by: 5)
        #expect(rig.applied() == [Change(at: 0, strong: 1, weak: 1), Change(at: 0.5, .off)])
        #expect(completions.all == [.cancelled])
    }

    /// Its completion handler hears once how a play ended: a cancel of a player that finished, that never
    /// started, or that was cancelled already tells it nothing more.
    @Test func cancellingAPlayerThatIsNotPlayingTellsItsHandlerNothing() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.2)))
        let completions = Inbox<HapticEngineError.Kind?>()
        player.completionHandler = { completions.put($0?.kind) }
        try player.cancel()
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        try player.cancel()
        try player.start(atTime: 0)
        try player.cancel()
        try player.cancel()
        #expect(completions.all == [nil, .cancelled])
    }

    @Test func naturalEndCompletesOnce() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.2)))
        let completions = Inbox<Bool>()
        player.completionHandler = { completions.put($0 == nil) }
        try player.start(atTime: 0)
        rig.clock.advance(by: 3)
        #expect(completions.all == [true])
        #expect(player.phase == .finished)
    }

    @Test func localityAndGainShapeTheMix() throws {
        var options = HapticEngineOptions()
        options.locality = .rightHandle
        options.gain = 0.5
        let rig = try Rig(options: options)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0.8, to: 0.1)))
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: 0, weak: 0.4), Change(at: 0.1, .off)])
    }

    /// A DualShock 3's weak motor is on or off: a sharp tap the engine's gain brings under half of it is played by
    /// the strong motor, at the tap's level after gain, rather than not at all.
    @Test func aSharpTapTheGainTurnsOffOnAnOnOffWeakMotorPlaysOnTheStrongMotor() throws {
        var options = HapticEngineOptions()
        options.gain = 0.8
        let rig = try Rig(options: options, renderProfile: .dualShock3)
        let tap = HapticEvent(
            type: .hapticTransient,
            parameters: [
                .init(parameterID: .hapticIntensity, value: 0.6), .init(parameterID: .hapticSharpness, value: 1),
            ],
            relativeTime: 0)
        let player = try rig.engine.makePlayer(with: HapticPattern(events: [tap], parameters: []))
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        let level = (0.6 * 0.8 * 255).rounded() / 255
        #expect(rig.applied() == [Change(at: 0, strong: level, weak: 0), Change(at: 0.04, .off)])
    }

    @Test func startingOnAStoppedEngineFails() throws {
        let rig = try Rig(start: false)
        let player = try rig.engine.makePlayer(with: HapticPattern(events: [], parameters: []))
        #expect(throws: HapticEngineError.self) { try player.start(atTime: 0) }
        #expect(rig.actions().isEmpty)
    }
}

/// A player's pattern is rendered for the device the engine plays on, whenever the player was made.
@Suite struct PlayersRenderedForTheDeviceTests {
    /// A sharp tap, a sharp continuous event and a second tap: what the Switch profiles shape as 60 ms pulses
    /// (generic: 40 ms), and what a DualShock 3's on/off weak motor hands to the strong motor once the engine's gain
    /// brings it under half.
    static let pattern = HapticPattern(
        events: [
            HapticEvent(
                type: .hapticTransient,
                parameters: [
                    .init(parameterID: .hapticIntensity, value: 0.6), .init(parameterID: .hapticSharpness, value: 1),
                ],
                relativeTime: 0),
            HapticEvent(
                type: .hapticContinuous,
                parameters: [
                    .init(parameterID: .hapticIntensity, value: 0.5), .init(parameterID: .hapticSharpness, value: 1),
                ],
                relativeTime: 0.1, duration: 0.5),
            HapticEvent(
                type: .hapticTransient,
                parameters: [
                    .init(parameterID: .hapticIntensity, value: 0.9), .init(parameterID: .hapticSharpness, value: 1),
                ],
                relativeTime: 0.7),
        ], parameters: [])

    /// What the device is sent when `pattern` plays from its start, its player made (and an intensity control sent
    /// for 300 ms later, held until then) before the engine starts or after.
    static func played(on profile: RenderProfile, madeBeforeStart: Bool) throws -> [Change] {
        var options = HapticEngineOptions()
        options.gain = 0.8
        let rig = try Rig(options: options, renderProfile: profile, start: false)
        func made() throws -> any HapticAdvancedPatternPlayer {
            let player = try rig.engine.makeAdvancedPlayer(with: pattern)
            try player.sendParameters(intensityControl(0.7), atTime: 10.3)
            return player
        }
        let early = madeBeforeStart ? try made() : nil
        try rig.engine.start()
        let player = try early ?? made()
        try player.start(atTime: 0)
        rig.clock.advance(by: 2)
        return rig.applied()
    }

    @Test(arguments: [RenderProfile.dualShock3, .switchPro])
    func aPlayerMadeBeforeStartPlaysAsOneMadeAfterItOnTheDevicesProfile(profile: RenderProfile) throws {
        let after = try Self.played(on: profile, madeBeforeStart: false)
        #expect(!after.isEmpty)
        #expect(try Self.played(on: profile, madeBeforeStart: true) == after)
    }

    /// The players made before `start()` are rendered for the device before the engine runs. Once it runs, a player
    /// started on another thread writes at once; until 7 December `start()` rendered the others only after that, and
    /// with no timer yet to end what the player started, a 40 ms tap was held at full for as long as they took.
    /// A pattern of 2,000 events, which takes a debug build a good tenth of a second to render.
    static let busy = HapticPattern(
        events: (0..<2000).map { index in
            HapticEvent(
                type: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 0.3 + Double(index % 7) / 20)],
                relativeTime: Double(index) * 0.007, duration: 0.013)
        }, parameters: [])

    @Test func playersMadeBeforeStartAreRenderedForTheDeviceBeforeTheEngineRuns() throws {
        let rig = try Rig(renderProfile: .dualShock3, start: false)
        let players = try (0..<4).map { _ in try rig.engine.makePlayer(with: Self.busy) }
        defer { withExtendedLifetime(players) {} }
        let starter = try ServiceThread.start { [engine = rig.engine] in _ = try? engine.start() }
        try spin(until: "the engine runs") { rig.engine.isRunning }
        let core = rig.engine.core
        let notYet = core.state.withLock { state in
            let renderer = core.patternRenderer(for: state.profile)
            return state.scheduler.players.values.filter { $0.rendering(with: renderer) != nil }.count
        }
        starter.join()
        #expect(notYet == 0, "players not yet rendered for the device when the engine ran")
    }

    /// A `stop()` that returns while a start renders its players for the device (after the device opened, before it
    /// is installed) wins: the engine stays stopped, and the device is let go. Until 7 December the start installed
    /// the device after the stop, and the engine ran on.
    @Test func aStopWhileAStartRendersItsPlayersWins() throws {
        let rig = try Rig(renderProfile: .dualShock3, start: false)
        let players = try (0..<4).map { _ in try rig.engine.makePlayer(with: Self.busy) }
        defer { withExtendedLifetime(players) {} }
        let starter = try ServiceThread.start { [engine = rig.engine] in _ = try? engine.start() }
        try spin(until: "the device opens") { rig.recorder.records().contains(where: { $0.action == .open }) }
        rig.engine.stop()
        starter.join()
        #expect(!rig.engine.isRunning)
        #expect(rig.engine.core.state.withLock { $0.output == nil && $0.watch == nil && $0.timer == nil })
    }

    /// A stopped engine keeps no hot-plug watch: a stop that lands while a start is under way takes the watch away,
    /// and the watch the start makes after it is let go (until 7 December it was kept, with its thread, until the
    /// next stop or destroy).
    @Test func aStoppedEngineKeepsNoWatch() throws {
        let rig = try Rig(start: false)
        rig.engine.core.startWatchIfNeeded()
        #expect(rig.engine.core.state.withLock { $0.watch == nil })
    }

    /// The DualShock 3's rule, checked on its own: the tap the gain brings under half of the on/off weak motor is
    /// played by the strong motor even when its player was made before the engine knew the device.
    @Test func aTapMadeBeforeStartIsPlayedByTheStrongMotorOfADualShock3() throws {
        let first = try #require(try Self.played(on: .dualShock3, madeBeforeStart: true).first)
        #expect(first == Change(at: 0, strong: (0.6 * 0.8 * 255).rounded() / 255, weak: 0))
    }
}

/// A `stop()` that returns before a start it raced with is done wins over it, whoever made the start: the engine
/// stays stopped, with nothing queued to play at its next `start()`.
@Suite struct StopDuringStartTests {
    static let tap = HapticPattern(
        events: [
            HapticEvent(
                type: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 1)], relativeTime: 0)
        ],
        parameters: [])

    /// A play on an engine waiting for its device starts the engine; a stop that returns while that start opens
    /// the device (held open here until the stop has returned) wins, and the play is refused with it. Until 7
    /// December the start returned as if it had run, the play queued its start on the stopped engine and said it
    /// had started, and the tap played at the next `start()`, however much later.
    @Test func aPlayWhoseStartAStopBeatIsRefusedAndNotPlayedAtTheNextStart() throws {
        let recorder = RecordingOutput(renderProfile: .dualShock3)
        let source = HeldOpenSource(device: recorder)
        let clock = ManualClock(startingAt: 10)
        let engine = HapticEngine(
            output: HapticOutputSelection(source: source), options: .init(), clock: clock, logger: quietLogger())
        recorder.failNext(.deviceGone)
        #expect(throws: HapticEngineError.self) { try engine.start() }
        #expect(engine.core.state.withLock { $0.phase } == .interrupted(.gameControllerDisconnect))
        let tap = try engine.makePlayer(with: Self.tap)
        source.holdOpens()
        let outcome = Lock<Result<Void, HapticEngineError>?>(nil)
        let starter = try ServiceThread.start {
            let result = Result { () throws(HapticEngineError) in try tap.start(atTime: 0) }
            outcome.withLock { $0 = result }
        }
        try spin(until: "the play's start opens the device") { source.opening.withLock { $0 } }
        engine.stop()
        source.release()
        starter.join()
        #expect(!engine.isRunning)
        let result = try #require(outcome.withLock { $0 })
        if case .failure(let refusal) = result {
            #expect(refusal.kind == .notRunning)
        } else {
            Issue.record("the play said it started on an engine stop() had stopped")
        }
        clock.advance(by: 1)
        let restart = clock.now
        try engine.start()
        clock.advance(by: 0.5)
        let played = recorder.appliedMixes().filter { $0.time >= restart && !$0.mix.isOff }
        #expect(played.isEmpty, "the tap played after the next start")
    }

    /// A stop that returns while a start opens a device that turns out not to be there wins: the engine stays
    /// stopped, with no watch to start it when a device appears. Until 7 December the start went on to wait for a
    /// device, and the engine started itself with the next pad plugged in.
    @Test func aStopWhileAStartFindsNoDeviceLeavesTheEngineStoppedWithNoWatch() throws {
        let source = HeldOpenSource(device: nil)
        let core = EngineCore(
            source: source, options: .init(), clock: ManualClock(startingAt: 10), logger: quietLogger())
        defer { core.destroy() }
        source.holdOpens()
        let starter = try ServiceThread.start { _ = try? core.start() }
        try spin(until: "the start opens the device") { source.opening.withLock { $0 } }
        core.stop(completion: nil)
        source.release()
        starter.join()
        let (phase, watched) = core.state.withLock { ($0.phase, $0.watch != nil) }
        #expect(phase == .stopped)
        #expect(!watched)
        #expect(source.watches.withLock { $0 } == 0)
    }

    /// A source whose opens, once the test holds them (`holdOpens`), wait until it lets them go on (`release`), and
    /// then open the recording output `device`, or find no device when there is none.
    final class HeldOpenSource: OutputSource {
        let device: (any OutputSource)?
        let opening = Lock(false)
        private let held = Lock(false)
        private let released = Lock(false)
        let watches = Lock(0)
        struct Watch: OutputWatch { func cancel() {} }

        init(device: RecordingOutput?) {
            self.device = device.map { HapticOutputSelection.recording($0).makeSource(.init()) }
        }

        func holdOpens() { held.withLock { $0 = true } }
        func release() { released.withLock { $0 = true } }

        func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
            if held.withLock({ $0 }) {
                opening.withLock { $0 = true }
                while !released.withLock({ $0 }) { Sys.yield() }
            }
            guard let device else { throw OutputFailure(.notFound, "no pad") }
            return try device.open(clock: clock, logger: logger)
        }

        func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? {
            watches.withLock { $0 += 1 }
            return Watch()
        }
    }
}

@Suite struct FireAndForgetTests {
    @Test func aReleasedPlayerPlaysToItsEndAndIsThenDropped() throws {
        let rig = try Rig()
        let completions = Inbox<Bool>()
        do {
            let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.2)))
            player.completionHandler = { completions.put($0 == nil) }
            try player.start(atTime: 0)
        }
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: 1, weak: 0), Change(at: 0.2, .off)])
        #expect(completions.all == [true])
    }
}

/// An intensity control of `value` sent to `player` for engine time `time`: as a parameter, or as a one-point curve.
private func sendIntensity(_ value: Double, to player: any HapticPatternPlayer, at time: Double, asCurve: Bool) throws {
    if asCurve {
        try player.scheduleParameterCurve(
            HapticParameterCurve(
                parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: value)],
                relativeTime: 0), atTime: time)
    } else {
        try player.sendParameters(intensityControl(value), atTime: time)
    }
}
