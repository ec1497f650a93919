import HapticRendering
import Testing
@testable import HapticTestDevices
import LinuxInput

/// Expected values are worked out by hand from drivers/input/ff-memless.c at CONFIG_HZ=250 (4 ms ticks,
/// `msecs_to_jiffies` rounding up: 50 ms -> 13 ticks -> 52 ms), with C's truncating integer division.
@Suite struct MotorModelTests {
    /// Tick 250 at 250 Hz: one second.
    static let start = PadTimestamp(microseconds: 1_000_000)

    static func at(milliseconds: Int64) -> PadTimestamp {
        PadTimestamp(microseconds: start.microseconds + milliseconds * 1000)
    }

    static func upload(
        _ kind: ForceFeedbackEffectKind, id: Int16 = 0, length: UInt16 = 0, delay: UInt16 = 0, retval: Int32 = 0
    )
        -> PadRecord
    {
        let effect = ForceFeedbackEffect(id: id, kind: kind, replayLength: length, replayDelay: delay)
        return PadRecord(
            event: .upload, time: PadTimestamp(microseconds: 0), id: id, effect: effect, replacing: false,
            retval: retval)
    }

    static func play(_ id: Int16 = 0, atMilliseconds ms: Int64 = 0, count: Int32 = 1) -> PadRecord {
        PadRecord(event: .play, time: at(milliseconds: ms), id: id, count: count)
    }

    static func stop(_ id: Int16 = 0, atMilliseconds ms: Int64) -> PadRecord {
        PadRecord(event: .stop, time: at(milliseconds: ms), id: id)
    }

    /// A full-scale sine (0x7fff) with `envelope`: waveform and period do not matter to ff-memless.
    static func fullSine(_ envelope: ForceFeedbackEnvelope) -> ForceFeedbackEffectKind {
        .periodic(waveform: .sine, period: 10, magnitude: 0x7fff, offset: 0, phase: 0, envelope: envelope)
    }

    static func levels(_ strong: UInt16, _ weak: UInt16) -> MotorMagnitudes {
        MotorMagnitudes(rumbleStrong: strong, rumbleWeak: weak)
    }

    static func change(_ ms: Int64, _ strong: UInt16, _ weak: UInt16) -> MotorChange {
        MotorChange(time: at(milliseconds: ms), levels: levels(strong, weak))
    }

    @Test func nothingUploadedMeansMotorsOff() {
        #expect(MotorModel().output(at: Self.start) == .off)
    }

    @Test func rumblePlaysForItsReplayLength() {
        let model = MotorModel(records: [Self.upload(.rumble(strong: 0x8000, weak: 0x4000), length: 100), Self.play()])
        #expect(model.output(at: Self.at(milliseconds: 0)) == Self.levels(0x8000, 0x4000))
        #expect(model.output(at: Self.at(milliseconds: 99)) == Self.levels(0x8000, 0x4000))
        #expect(model.output(at: Self.at(milliseconds: 100)) == .off)
        #expect(
            model.timeline(until: Self.at(milliseconds: 500)) == [
                Self.change(0, 0x8000, 0x4000), Self.change(100, 0, 0),
            ])
        #expect(model.nextChange(after: Self.at(milliseconds: 10)) == Self.change(100, 0, 0))
        #expect(model.nextChange(after: Self.at(milliseconds: 100)) == nil)
    }

    @Test func zeroLengthPlaysUntilStopped() {
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 0xffff, weak: 1)), Self.play(), Self.stop(atMilliseconds: 20),
        ])
        #expect(model.output(at: Self.at(milliseconds: 19)) == Self.levels(0xffff, 1))
        #expect(model.output(at: Self.at(milliseconds: 20)) == .off)
    }

    @Test func historyAnswersForTimesBeforeTheLastRecord() {
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 5, weak: 6)), Self.play(), Self.stop(atMilliseconds: 20),
            Self.play(atMilliseconds: 40),
        ])
        #expect(model.output(at: Self.at(milliseconds: -1)) == .off)
        #expect(model.output(at: Self.at(milliseconds: 10)) == Self.levels(5, 6))
        #expect(model.output(at: Self.at(milliseconds: 30)) == .off)
        #expect(model.output(at: Self.at(milliseconds: 41)) == Self.levels(5, 6))
        #expect(model.nextChange(after: Self.at(milliseconds: 10)) == Self.change(20, 0, 0))
        #expect(model.nextChange(after: Self.at(milliseconds: 40)) == nil)
    }

    /// Ten minutes of a rumble switched on and off every 100 ms, fed to a model that keeps everything and to one
    /// that keeps the last minute (a long-running pad's): the second holds at most two minutes of changes and
    /// answers the same for the last minute.
    @Test func aBoundedHistoryKeepsTheLastMinuteAndForgetsTheRest() {
        var full = MotorModel()
        var bounded = MotorModel()
        let upload = Self.upload(.rumble(strong: 0x8000, weak: 0x4000))
        full.apply(upload)
        bounded.apply(upload)
        for step in Int64(0)..<6000 {
            let record =
                step.isMultiple(of: 2) ? Self.play(atMilliseconds: step * 100) : Self.stop(atMilliseconds: step * 100)
            full.apply(record)
            bounded.apply(record)
            bounded.keepHistory(seconds: 60, before: record.time)
        }
        let end = Self.at(milliseconds: 600_000)
        let lastMinute = Self.at(milliseconds: 540_000)
        #expect(full.timeline(until: end).count == 6000)
        #expect(bounded.timeline(until: end).count <= 1201)
        #expect(
            bounded.timeline(until: end).filter { $0.time >= lastMinute }
                == full.timeline(until: end).filter { $0.time >= lastMinute })
        for milliseconds in [540_000, 570_050, 599_950, 600_100] as [Int64] {
            #expect(
                bounded.output(at: Self.at(milliseconds: milliseconds))
                    == full.output(at: Self.at(milliseconds: milliseconds)))
        }
    }

    @Test func delayPostponesTheStart() {
        // 20 ms = 5 ticks after the play; 40 ms of length ends 10 ticks later.
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 100, weak: 200), length: 40, delay: 20), Self.play(),
        ])
        #expect(model.output(at: Self.at(milliseconds: 19)) == .off)
        #expect(
            model.timeline(until: Self.at(milliseconds: 100)) == [Self.change(20, 100, 200), Self.change(60, 0, 0)])
    }

    @Test func gainScalesWithTruncation() {
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 0x8000, weak: 0x4000)), Self.play(),
            PadRecord(event: .gain, time: Self.at(milliseconds: 40), value: 0x8000),
        ])
        // 0x8000 * 0x8000 / 0xffff = 16384.25 -> 16384; 0x4000 * 0x8000 / 0xffff = 8192.06 -> 8192.
        #expect(model.output(at: Self.at(milliseconds: 40)) == Self.levels(16384, 8192))
    }

    @Test func sumsSaturate() {
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 0xc000, weak: 0x1000), id: 0),
            Self.upload(.rumble(strong: 0xc000, weak: 0x2000), id: 1),
            Self.play(0), Self.play(1),
        ])
        #expect(model.output(at: Self.start) == Self.levels(0xffff, 0x3000))
    }

    @Test func periodicDrivesBothMotorsWithAbsoluteMagnitudeWhateverTheWaveform() {
        for waveform in [ForceFeedbackFeature.sine, .square, .sawDown] {
            let periodic = ForceFeedbackEffectKind.periodic(
                waveform: waveform, period: 20, magnitude: -0x4000, offset: 1000, phase: 3, envelope: .init())
            let model = MotorModel(records: [Self.upload(periodic), Self.play()])
            // 0x4000 * 0xffff / 0x7fff = 32768.99 -> 32768.
            #expect(model.output(at: Self.start) == Self.levels(32768, 32768))
        }
    }

    @Test func attackRisesInFiftyMillisecondSteps() {
        let attack = Self.fullSine(ForceFeedbackEnvelope(attackLength: 200, attackLevel: 0))
        let model = MotorModel(records: [Self.upload(attack, length: 1000), Self.play()])
        // At the play the attack is at its level, 0: no change. Then every 13 ticks (52 ms):
        // 32767 * 52 / 200 = 8519 -> * 0xffff / 0x7fff = 17038; 104 ms -> 17038 -> 34076; 156 ms -> 25558 ->
        // 51116; at 208 ms the attack (50 ticks) is over: full 0xffff; the replay ends at 1000 ms.
        #expect(
            model.timeline(until: Self.at(milliseconds: 2000)) == [
                Self.change(52, 17038, 17038), Self.change(104, 34076, 34076), Self.change(156, 51116, 51116),
                Self.change(208, 0xffff, 0xffff), Self.change(1000, 0, 0),
            ])
    }

    @Test func fadeFallsTowardsTheFadeLevel() {
        let fade = Self.fullSine(ForceFeedbackEnvelope(fadeLength: 100, fadeLevel: 0))
        let model = MotorModel(records: [Self.upload(fade, length: 200), Self.play()])
        // Stop at tick 300 (200 ms); the fade starts at tick 275 (still full: the kernel tests "after",
        // strictly); at tick 288 (152 ms) 48 ms remain: 32767 * 48 / 100 = 15728 -> 31456; then the stop.
        #expect(
            model.timeline(until: Self.at(milliseconds: 400)) == [
                Self.change(0, 0xffff, 0xffff), Self.change(152, 31456, 31456), Self.change(200, 0, 0),
            ])
    }

    @Test func repeatCountReplaysWithAOneTickGap() {
        // ff-memless ends the first replay at its stop time, reschedules the next for "now", and a timer due
        // now fires on the next tick: off for 4 ms between replays. The second replay's stop time counts from
        // the reschedule, so it also ends on time (80 ms), a tick short.
        let model = MotorModel(records: [Self.upload(.rumble(strong: 7, weak: 9), length: 40), Self.play(count: 2)])
        #expect(
            model.timeline(until: Self.at(milliseconds: 400)) == [
                Self.change(0, 7, 9), Self.change(40, 0, 0), Self.change(44, 7, 9), Self.change(80, 0, 0),
            ])
    }

    @Test func refusedUploadsAndOtherTypesDoNotDriveMotors() {
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 500, weak: 500), id: 0, retval: -28),
            Self.upload(.constant(level: 0x7fff, envelope: .init()), id: 1),
            Self.play(0), Self.play(1), Self.play(5),
        ])
        #expect(model.output(at: Self.start) == .off)
        #expect(model.timeline(until: Self.at(milliseconds: 100)).isEmpty)
    }

    @Test func replacingAStartedEffectRestartsItWithTheOldTiming() {
        // ml_ff_upload restarts a started effect from the old effect's replay (the new one is copied in
        // after the driver returns): playing stops until the timer at the old delay (0) fires a tick later.
        var model = MotorModel(records: [Self.upload(.rumble(strong: 10, weak: 10), length: 0), Self.play()])
        var replacement = Self.upload(.rumble(strong: 20, weak: 30), length: 0)
        replacement.time = Self.at(milliseconds: 40)
        replacement.replacing = true
        model.apply(replacement)
        #expect(model.output(at: Self.at(milliseconds: 40)) == Self.levels(10, 10))
        #expect(model.output(at: Self.at(milliseconds: 44)) == Self.levels(20, 30))
    }

    /// A record replacing effect `id` at `ms` (an update in place).
    static func update(_ kind: ForceFeedbackEffectKind, id: Int16, length: UInt16, atMilliseconds ms: Int64)
        -> PadRecord
    {
        var record = upload(kind, id: id, length: length)
        record.time = at(milliseconds: ms)
        record.replacing = true
        return record
    }

    @Test func aStopBeforeTheTickAfterAnUpdateLeavesTheOldLevelWithNothingElsePlaying() {
        // The quirk the keeper answers: the stop finds the effect not playing, only clears "started", and with
        // nothing else started ff-memless calls no driver.
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 10, weak: 10), length: 150), Self.play(),
            Self.update(.rumble(strong: 20, weak: 20), id: 0, length: 150, atMilliseconds: 40),
            Self.stop(atMilliseconds: 40),
        ])
        #expect(model.output(at: Self.at(milliseconds: 1000)) == Self.levels(10, 10))
    }

    @Test func aPlayAndAStopInsideATickChangeTheMotorsWhenCalledAnUpdateOnTheNextTick() {
        // ml_ff_playback calls the driver at once; an update of a playing effect waits for the timer's tick.
        func at(microseconds: Int64) -> PadTimestamp {
            PadTimestamp(microseconds: Self.start.microseconds + microseconds)
        }
        var play = Self.play(1)
        play.time = at(microseconds: 1_500)
        var update = Self.update(.rumble(strong: 20, weak: 20), id: 1, length: 150, atMilliseconds: 0)
        update.time = at(microseconds: 10_500)
        var stop = Self.stop(1, atMilliseconds: 0)
        stop.time = at(microseconds: 30_500)
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 0, weak: 0), id: 0, length: 0), Self.play(0),
            Self.upload(.rumble(strong: 10, weak: 10), id: 1, length: 150), play, update, stop,
        ])
        #expect(
            model.timeline(until: Self.at(milliseconds: 100)) == [
                MotorChange(time: at(microseconds: 1_500), levels: Self.levels(10, 10)),
                MotorChange(time: at(microseconds: 12_000), levels: Self.levels(20, 20)),
                MotorChange(time: at(microseconds: 30_500), levels: .off),
            ])
        #expect(model.output(at: at(microseconds: 1_499)) == .off)
        #expect(model.output(at: at(microseconds: 1_500)) == Self.levels(10, 10))
        #expect(model.output(at: at(microseconds: 11_999)) == Self.levels(10, 10))
        #expect(model.output(at: at(microseconds: 30_499)) == Self.levels(20, 20))
        #expect(model.output(at: at(microseconds: 30_500)) == .off)
        #expect(
            model.nextChange(after: at(microseconds: 1_000))
                == MotorChange(time: at(microseconds: 1_500), levels: Self.levels(10, 10)))
    }

    @Test func besideAPlayingKeeperAnUpdateAppliesOnTheNextTickAndAStopBeforeItRests() {
        let keeper = Self.upload(.rumble(strong: 0, weak: 0), id: 0, length: 0)
        let mix = Self.upload(.rumble(strong: 10, weak: 10), id: 1, length: 150)
        let updated = MotorModel(records: [
            keeper, Self.play(0), mix, Self.play(1),
            Self.update(.rumble(strong: 20, weak: 20), id: 1, length: 150, atMilliseconds: 40),
        ])
        #expect(updated.output(at: Self.at(milliseconds: 40)) == Self.levels(10, 10))
        #expect(updated.output(at: Self.at(milliseconds: 44)) == Self.levels(20, 20))
        // The update restarted the replay window: it ends 150 ms after it, not after the play.
        #expect(updated.output(at: Self.at(milliseconds: 186)) == Self.levels(20, 20))
        #expect(updated.output(at: Self.at(milliseconds: 192)) == .off)
        var stopped = updated
        stopped.apply(Self.stop(1, atMilliseconds: 40))
        #expect(stopped.output(at: Self.at(milliseconds: 40)) == .off)
        #expect(stopped.output(at: Self.at(milliseconds: 1000)) == .off)
        // A close erases in slot order: the keeper first, then the mix effect (combined, then aborted).
        var closed = updated
        for record in [
            Self.stop(0, atMilliseconds: 40),
            PadRecord(event: .erase, time: Self.at(milliseconds: 40), id: 0, retval: 0),
            Self.stop(1, atMilliseconds: 40),
            PadRecord(event: .erase, time: Self.at(milliseconds: 40), id: 1, retval: 0),
        ] { closed.apply(record) }
        #expect(closed.output(at: Self.at(milliseconds: 1000)) == .off)
    }

    @Test func erasedEffectsStopContributing() {
        let model = MotorModel(records: [
            Self.upload(.rumble(strong: 10, weak: 10)), Self.play(), Self.stop(atMilliseconds: 8),
            PadRecord(event: .erase, time: Self.at(milliseconds: 8), id: 0, retval: 0), Self.play(atMilliseconds: 12),
        ])
        #expect(model.output(at: Self.at(milliseconds: 12)) == .off)
    }

    @Test func finerTickRatesChangeTheGrid() {
        let model = MotorModel(
            records: [Self.upload(.rumble(strong: 1, weak: 2), length: 10), Self.play()], tickRate: .hz1000)
        #expect(model.timeline(until: Self.at(milliseconds: 100)) == [Self.change(0, 1, 2), Self.change(10, 0, 0)])
    }
}
