// The device calls a change of the mix takes on evdev, decided from what the mix slot holds: a start at the
// levels the slot already holds is one play, with no update; a new level while the effect plays beside the keeper
// is one update.
import HapticRendering
import Testing

@testable import LinuxHaptics

@Suite struct MixSlotTests {
    static let full = MotorMagnitudes(strong: 1, weak: 1)
    static let half = MotorMagnitudes(strong: 0.5, weak: 0.25)

    @Test func stagingAStoppedSlotMakesTheNextChangeOnePlay() {
        var slot = MixSlotState(levels: Self.half, playingUntil: 0)
        #expect(slot.staging(Self.full, at: 1) == .updateThenPlay)
        slot.levels = Self.full
        #expect(slot.change(to: Self.full, explicitly: false, at: 1) == .play)
        #expect(MixSlotState().staging(Self.full, at: 1) == .uploadThenPlay, "an empty slot is uploaded, not played")
    }

    @Test(arguments: [(2.0, MotorMagnitudes(strong: 1, weak: 1)), (0.0, MotorMagnitudes.off), (0.0, MixSlotTests.half)])
    func stagingLeavesAPlayingSlotOffAndTheLevelsItHoldsAlone(playingUntil: Double, target: MotorMagnitudes) {
        // A playing effect would be heard changing; off needs no staging; the slot already holds half.
        let slot = MixSlotState(levels: Self.half, playingUntil: playingUntil)
        #expect(slot.staging(target, at: 1) == .none)
    }

    @Test func theFirstLevelIsUploadedThenPlayed() {
        #expect(MixSlotState().change(to: Self.full, explicitly: false, at: 1) == .uploadThenPlay)
    }

    @Test func anotherLevelWithoutAKeeperUpdatesTheSlotThenPlays() {
        let slot = MixSlotState(levels: Self.half, playingUntil: 2)
        #expect(slot.change(to: Self.full, explicitly: false, at: 1) == .updateThenPlay)
    }

    @Test func anotherLevelWhileTheEffectPlaysBesideTheKeeperIsAnUpdateAlone() {
        let slot = MixSlotState(levels: Self.half, playingUntil: 1.15, keeperPlays: true)
        #expect(slot.change(to: Self.full, explicitly: false, at: 1) == .update)
    }

    @Test(arguments: [
        // Stopped, or ended by the kernel: an update alone would play nothing.
        0.0, 0.9,
        // Within the margin of the replay window's end: the kernel may end it before the update arrives.
        1.0 + OutputTiming.updateMarginSeconds / 2,
    ])
    func anotherLevelBesideTheKeeperOutsideTheReplayWindowIsUpdatedThenPlayed(playingUntil: Double) {
        let slot = MixSlotState(levels: Self.half, playingUntil: playingUntil, keeperPlays: true)
        #expect(slot.change(to: Self.full, explicitly: false, at: 1) == .updateThenPlay)
        // So a change then lands at once, and `EvdevOutput.changeLead` writes it at its time, not ahead of it.
        #expect(!slot.updatesAlone(at: 1))
    }

    @Test func changesUpdateAloneOnlyBesideTheKeeperWithinTheReplayWindowLessTheMargin() {
        let margin = OutputTiming.updateMarginSeconds
        #expect(MixSlotState(levels: Self.half, playingUntil: 1.15, keeperPlays: true).updatesAlone(at: 1))
        #expect(!MixSlotState(levels: Self.half, playingUntil: 1.15, keeperPlays: false).updatesAlone(at: 1))
        #expect(!MixSlotState(levels: Self.half, playingUntil: 1 + margin / 2, keeperPlays: true).updatesAlone(at: 1))
        #expect(MixSlotState(levels: Self.half, playingUntil: 1 + 2 * margin, keeperPlays: true).updatesAlone(at: 1))
    }

    @Test func offBesideTheKeeperIsStillAStopAndAnExplicitOffStillAZeroRumblePlayed() {
        let slot = MixSlotState(levels: Self.half, playingUntil: 2, keeperPlays: true)
        #expect(slot.change(to: .off, explicitly: false, at: 1) == .stop)
        #expect(slot.change(to: .off, explicitly: true, at: 1) == .updateThenPlay)
    }

    @Test func stagingIsTheSameBesideTheKeeper() {
        let stopped = MixSlotState(levels: Self.half, playingUntil: 0, keeperPlays: true)
        #expect(stopped.staging(Self.full, at: 1) == .updateThenPlay)
        let playing = MixSlotState(levels: Self.half, playingUntil: 2, keeperPlays: true)
        #expect(playing.staging(Self.full, at: 1) == .none)
    }

    @Test(arguments: [0.0, 2.0])
    func theLevelTheSlotHoldsIsOnlyPlayed(playingUntil: Double) {
        // Stopped (off came as a stop) or still playing (a renewal): the effect holds the level either way.
        let slot = MixSlotState(levels: Self.full, playingUntil: playingUntil)
        #expect(slot.change(to: Self.full, explicitly: false, at: 1) == .play)
    }

    @Test func offWhileTheEffectPlaysIsAStop() {
        let slot = MixSlotState(levels: Self.full, playingUntil: 2)
        #expect(slot.change(to: .off, explicitly: false, at: 1) == .stop)
    }

    @Test(arguments: [
        MixSlotState(),
        MixSlotState(levels: Self.full, playingUntil: 0),
        // Past its replay window the kernel stopped the effect by itself.
        MixSlotState(levels: Self.full, playingUntil: 0.9),
    ])
    func offWhileNothingOfOursPlaysTakesNoCall(slot: MixSlotState) {
        #expect(slot.change(to: .off, explicitly: false, at: 1) == .none)
    }

    @Test func anExplicitOffIsAZeroRumblePlayed() {
        #expect(MixSlotState().change(to: .off, explicitly: true, at: 1) == .uploadThenPlay)
        let holding = MixSlotState(levels: Self.full, playingUntil: 0)
        #expect(holding.change(to: .off, explicitly: true, at: 1) == .updateThenPlay)
        let zero = MixSlotState(levels: .off, playingUntil: 0)
        #expect(zero.change(to: .off, explicitly: true, at: 1) == .play)
    }

    @Test func aSlotWhoseUpdateFailedIsUpdatedAgainNeitherUploadedNorPlayedAsItWas() {
        // An update that failed leaves the slot's levels unknown: the next change writes them again.
        let failed = MixSlotState(levels: nil, uploaded: true, playingUntil: 2, keeperPlays: true)
        #expect(failed.change(to: Self.full, explicitly: false, at: 1) == .updateThenPlay)
        #expect(failed.change(to: Self.half, explicitly: false, at: 1) == .updateThenPlay)
        #expect(MixSlotState(levels: nil, uploaded: true, playingUntil: 0).staging(Self.full, at: 1) == .updateThenPlay)
    }

    @Test func switchPadsRenewEvery40MillisecondsWithAnEightyMillisecondWindowOthersEvery50With150() {
        let switchPad = OutputTiming.Renewal.forProfile(.switchPro)
        #expect(switchPad.holdSeconds == 0.04 && switchPad.replayLengthMilliseconds == 80)
        for profile in RenderProfile.builtIn where profile.name != RenderProfile.switchPro.name {
            let renewal = OutputTiming.Renewal.forProfile(profile)
            #expect(renewal.holdSeconds == 0.05 && renewal.replayLengthMilliseconds == 150, "\(profile.name)")
        }
        #expect(OutputTiming.Renewal.standard == .forProfile(.genericRumble))
    }

    /// A custom profile's renewal interval past the range (1e9 s) is renewed every second, in an effect of 1.1 s;
    /// a NaN one at the standard rhythm. The replay length of either trapped converting to 16-bit milliseconds.
    @Test func aCustomProfilesHugeOrNaNRenewalIntervalGivesAnEffectLengthThatFits() {
        var profile = RenderProfile.genericRumble
        profile.budget.renewalInterval = 1e9
        let huge = OutputTiming.Renewal.forProfile(profile)
        #expect(huge.holdSeconds == 1 && huge.replayLengthMilliseconds == 1_100)
        profile.budget.renewalInterval = .nan
        #expect(OutputTiming.Renewal.forProfile(profile) == .standard)
    }
}
