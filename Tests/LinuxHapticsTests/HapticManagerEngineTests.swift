// HapticManager on the real engine, driving the engine's recording output on a manual clock: what reaches the
// output, taps that do not pile up, and the unplug/replug recovery end to end.
import AHAP
import Foundation
import HapticRendering
@testable import LinuxHaptics
@testable import AppHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@MainActor
@Suite struct HapticManagerEngineTests {
    @MainActor struct Setup {
        let clock = ManualClock(startingAt: 10)
        let recorder = RecordingOutput()
        let log = RecordingLog()
        let manager: HapticManager

        init() {
            let provider = EngineOutputProvider(output: .recording(recorder), clock: clock, logger: quietLogger())
            manager = HapticManager(
                resolver: HapticResourceDirectory(directory: AppAssets.folder), engineProvider: provider,
                logger: log.logger)
        }

        /// Prepares `pattern` through the manager; the id of the pulse it uploaded, nil (recorded as an issue) when
        /// it uploaded none.
        func prepare(_ pattern: HapticPattern) -> Int? {
            manager.prepare(pattern: pattern)
            let actions = recorder.records().map(\.action)
            guard case .prepare(let id)? = actions.last(where: { if case .prepare = $0 { true } else { false } })
            else {
                Issue.record("nothing was prepared: \(actions)")
                return nil
            }
            return id
        }

        /// The strongest mix applied since `time`.
        func peak(since time: Double) -> MotorMagnitudes {
            recorder.appliedMixes().filter { $0.time >= time }.map(\.mix)
                .max { $0.strong + $0.weak < $1.strong + $1.weak } ?? .off
        }
    }

    @Test func theFirstGamepadProviderCarriesTheActuatorsAndLocality() {
        let provider = EngineOutputProvider.firstGamepad(
            logger: quietLogger(), actuators: .automatic, locality: .leftTrigger)
        #expect(provider.options.actuators == .automatic)
        #expect(provider.options.locality == .leftTrigger)
        #expect(EngineOutputProvider.firstGamepad(logger: quietLogger()).options.locality == .all)
    }

    @Test func aCachedPatternReachesTheOutput() {
        let setup = Setup()
        #expect(setup.manager.engineAvailable)
        setup.manager.preloadPatterns()
        setup.manager.play("thud")
        setup.clock.advance(by: 1)
        // thud's hit: intensity 1.0, sharpness 0.1.
        let peak = setup.peak(since: 10)
        #expect(peak.strong + peak.weak > 0.9, "\(setup.recorder.appliedMixes())")
    }

    @Test func rapidTapsReplaceEachOtherInsteadOfPilingUp() {
        let once = Setup()
        once.manager.playTransientEvent(intensity: 0.3, sharpness: 0.5)
        once.clock.advance(by: 1)
        let single = once.peak(since: 10)
        let rapid = Setup()
        for _ in 0..<20 { rapid.manager.playTransientEvent(intensity: 0.3, sharpness: 0.5) }
        rapid.clock.advance(by: 1)
        let peak = rapid.peak(since: 10)
        #expect(single.strong + single.weak > 0, "a tap plays")
        #expect(peak == single, "twenty taps at once play as one: \(peak) vs \(single)")
    }

    @Test func aPreparedImpactStartsWithOneTrigger() {
        let setup = Setup()
        let impact = HapticFeedback.impact(.rigid).pattern
        guard let id = setup.prepare(impact) else { return }
        setup.recorder.clearRecords()
        setup.manager.play(pattern: impact)
        #expect(setup.recorder.records().map(\.action).first == .trigger(id: id), "one trigger, no upload")
    }

    @Test func aPreparedImpactStaysPreparedEveryPlayIsOneTriggerOfItsPulse() {
        let setup = Setup()
        let impact = HapticFeedback.impact(.rigid).pattern
        guard let id = setup.prepare(impact) else { return }
        for round in 0..<3 {
            setup.recorder.clearRecords()
            setup.manager.play(pattern: impact)
            let actions = setup.recorder.records().map(\.action)
            #expect(actions.first == .trigger(id: id), "play \(round): \(actions)")
            #expect(!actions.contains { if case .prepare = $0 { true } else { false } }, "play \(round) uploaded")
            setup.clock.advance(by: 1)
        }
    }

    /// At most `mostPlaysSounding` ordinary plays sound together: a hundred plays of a long pattern in a loop leave
    /// the last 32 playing, the oldest cancelled (until 6 December all played, and each start mixed every one).
    @Test func playsPastTheLimitCancelTheOldest() throws {
        let clock = ManualClock(startingAt: 10)
        let engine = HapticEngine(output: .recording(RecordingOutput()), clock: clock, logger: quietLogger())
        let adapter = ManagedEngineAdapter(engine: engine)
        try adapter.start()
        defer { adapter.stop() }
        let hum = HapticPattern(
            events: [HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 10)], parameters: [])
        for _ in 0..<100 { try adapter.play(hum) }
        clock.advance(by: 0.1)
        let phases = engine.core.state.withLock { state in state.scheduler.players.values.map(\.phase) }
        #expect(phases.filter { $0 == .playing }.count == ManagedEngineAdapter.mostPlaysSounding)
    }

    @Test func aKeptPlayerInvalidatedByAResetIsForgottenItsPlayGoesTheOrdinaryWayAndPrepareUploadsAgain() throws {
        let clock = ManualClock(startingAt: 10)
        let recorder = RecordingOutput()
        let adapter = ManagedEngineAdapter(
            engine: HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger()))
        try adapter.start()
        defer { adapter.stop() }
        let impact = HapticFeedback.impact(.rigid).pattern
        try adapter.prepare(impact)
        recorder.unplug()
        recorder.replug()
        recorder.clearRecords()
        try adapter.play(impact)
        clock.advance(by: 1)
        let played = recorder.appliedMixes().map(\.mix)
        #expect(played.contains { !$0.isOff }, "the play after the reset played: \(recorder.records())")
        recorder.clearRecords()
        try adapter.prepare(impact)
        let uploads = recorder.records().filter { if case .prepare = $0.action { true } else { false } }
        #expect(uploads.count == 1, "preparing again uploads again: \(recorder.records())")
    }

    @Test func aKeptPatternTheFifthPrepareLetGoPlaysTheOrdinaryWayTheOtherFourTheirPulses() {
        let setup = Setup()
        let impacts = ImpactStyle.allCases.map { HapticFeedback.impact($0).pattern }
        #expect(impacts.count == ManagedEngineAdapter.preparedLimit + 1)
        var ids: [Int] = []
        for impact in impacts {
            guard let id = setup.prepare(impact) else { return }
            ids.append(id)
        }
        #expect(Set(ids).count == impacts.count, "five pulses: \(ids)")
        // The fifth took the oldest one's slot: the manager no longer starts the first one's player.
        setup.recorder.clearRecords()
        let start = setup.clock.now
        setup.manager.play(pattern: impacts[0])
        setup.clock.advance(by: 1)
        let first = setup.recorder.records().map(\.action)
        #expect(!first.contains(.trigger(id: ids[0])), "the pattern let go plays the ordinary way: \(first)")
        #expect(setup.peak(since: start).strong + setup.peak(since: start).weak > 0, "and plays")
        for index in 1..<impacts.count {
            setup.recorder.clearRecords()
            setup.manager.play(pattern: impacts[index])
            let actions = setup.recorder.records().map(\.action)
            #expect(actions.first == .trigger(id: ids[index]), "impact \(index): \(actions)")
            setup.clock.advance(by: 1)
        }
    }

    @Test func aKeptPlayerAResetInvalidatedIsNotTriggeredAgainEveryPlayOfItGoesTheOrdinaryWay() {
        let setup = Setup()
        let impact = HapticFeedback.impact(.rigid).pattern
        guard let id = setup.prepare(impact) else { return }
        setup.recorder.unplug()
        setup.recorder.replug()
        // Before the reset callback's task runs the manager still holds the engine, and with it the kept player.
        for round in 0..<2 {
            setup.recorder.clearRecords()
            let start = setup.clock.now
            setup.manager.play(pattern: impact)
            setup.clock.advance(by: 1)
            let actions = setup.recorder.records().map(\.action)
            #expect(!actions.contains(.trigger(id: id)), "play \(round): \(actions)")
            let peak = setup.peak(since: start)
            #expect(peak.strong + peak.weak > 0, "play \(round) played: \(setup.recorder.records())")
        }
    }

    @Test func aPreparedPatternWithoutAPulseServesOnePlayTheNextPlaysOverlap() {
        // Silence first: no opening to upload, so the player prepared is the next play's alone.
        let late = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 0.3)],
                    relativeTime: 0.05, duration: 0.2)
            ], parameters: [])
        let once = Setup()
        once.manager.prepare(pattern: late)
        once.manager.play(pattern: late)
        once.clock.advance(by: 1)
        let twice = Setup()
        twice.manager.prepare(pattern: late)
        twice.manager.play(pattern: late)
        twice.manager.play(pattern: late)
        twice.clock.advance(by: 1)
        let one = once.peak(since: 10), both = twice.peak(since: 10)
        #expect(one.strong + one.weak > 0, "the prepared play plays")
        #expect(both.strong + both.weak > one.strong + one.weak, "the second play adds up: \(both) vs \(one)")
    }

    @Test func aPreparedPatternIsNotTakenForACopyOfItWithOtherCurves() {
        let setup = Setup()
        let impact = HapticFeedback.impact(.rigid).pattern
        guard let id = setup.prepare(impact) else { return }
        // The copy shares the prepared pattern's event storage but not its curves': its identity differs, and so
        // does equality.
        var softened = impact
        softened.parameterCurves = [
            HapticParameterCurve(
                parameterID: .hapticIntensityControl,
                controlPoints: [.init(relativeTime: 0, value: 0.3), .init(relativeTime: 0.1, value: 0.3)],
                relativeTime: 0)
        ]
        setup.recorder.clearRecords()
        setup.manager.play(pattern: softened)
        #expect(!setup.recorder.records().map(\.action).contains(.trigger(id: id)), "the copy plays the ordinary way")
        setup.manager.play(pattern: impact)
        #expect(
            setup.recorder.records().map(\.action).contains(.trigger(id: id)), "the prepared pattern is still there")
    }

    @Test func aPreparedPatternIsFoundForAnEqualOneBuiltAnewNotForACopyWithOtherMetadata() {
        let setup = Setup()
        let impact = HapticFeedback.impact(.rigid).pattern
        guard let id = setup.prepare(impact) else { return }
        // Every array shared with the prepared pattern: only the metadata tells them apart.
        var named = impact
        named.metadata = PatternMetadata(entries: ["Project": "other"])
        setup.recorder.clearRecords()
        setup.manager.play(pattern: named)
        #expect(!setup.recorder.records().map(\.action).contains(.trigger(id: id)), "the copy plays the ordinary way")
        setup.clock.advance(by: 1)
        // Equal, in storage of its own.
        let anew = HapticPattern(
            events: impact.events.map { $0 }, parameters: impact.dynamicParameters.map { $0 }, version: impact.version,
            metadata: impact.metadata)
        #expect(anew == impact)
        setup.recorder.clearRecords()
        setup.manager.play(pattern: anew)
        #expect(setup.recorder.records().map(\.action).first == .trigger(id: id), "the equal pattern is found")
    }

    @Test func aPatternsArraysAndMetadataAreOneWordEachAsThePreparedLookupReadsThem() {
        // The lookup takes each one's only word for the address of its storage.
        #expect(MemoryLayout<[HapticEvent]>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<[HapticDynamicParameter]>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<[HapticParameterCurve]>.size == MemoryLayout<UInt>.size)
        #expect(MemoryLayout<PatternMetadata?>.size == MemoryLayout<UInt>.size)
        let none: PatternMetadata? = nil
        #expect(withUnsafeBytes(of: none) { $0.load(as: UInt.self) } == 0, "no metadata reads as 0")
    }

    @Test func concurrentPlaysOfDifferentPatternsMix() {
        // Two quiet taps of different patterns: together they drive harder than either alone.
        let first = FeedbackVocabulary.taps([FeedbackVocabulary.Tap(time: 0, intensity: 0.3, sharpness: 0.5)])
        let second = FeedbackVocabulary.taps([FeedbackVocabulary.Tap(time: 0, intensity: 0.3, sharpness: 0.4)])
        let alone = Setup()
        alone.manager.play(pattern: first)
        alone.clock.advance(by: 1)
        let together = Setup()
        together.manager.play(pattern: first)
        together.manager.play(pattern: second)
        together.clock.advance(by: 1)
        let one = alone.peak(since: 10), both = together.peak(since: 10)
        #expect(both.strong + both.weak > one.strong + one.weak, "the patterns add up: \(both) vs \(one)")
        #expect(together.recorder.appliedMixes().last?.mix == .off, "and both end")
    }

    @Test func aPlayTheOwnEngineRefusesIsLoggedWithWhatFailedAndNothingReachesTheOutput() {
        // The manager calls its own engine without the protocol: a failure there ends in the same log line.
        let setup = Setup()
        setup.recorder.unplug()
        // Before the stopped callback's task runs, the manager still counts the engine available.
        #expect(setup.manager.engineAvailable)
        setup.recorder.clearRecords()
        setup.manager.play(pattern: HapticFeedback.impact(.rigid).pattern)
        setup.clock.advance(by: 1)
        #expect(setup.log.contains("playing a pattern failed"), "\(setup.log.entries)")
        #expect(setup.recorder.appliedMixes().allSatisfy { $0.mix.isOff }, "\(setup.recorder.records())")
    }

    @Test func unplugThenReplugFlipsAvailabilityAndPlaysAgain() async {
        let setup = Setup()
        setup.manager.preloadPatterns()
        setup.manager.play("heartbeat")
        setup.clock.advance(by: 0.05)
        setup.recorder.unplug()
        await setup.log.waitForRecovery(count: 1)
        #expect(setup.manager.engineAvailable == false)
        setup.manager.play("thud")
        setup.clock.advance(by: 1)
        setup.recorder.replug()
        await setup.log.waitForRecovery(count: 2)
        #expect(setup.manager.engineAvailable)
        #expect(setup.manager.cachedPatternNames == ["capacitor_charge", "heartbeat", "thud"])
        let replugged = setup.clock.now
        setup.manager.play("thud")
        setup.clock.advance(by: 1)
        #expect(setup.peak(since: replugged).strong > 0, "plays again after the replug")
    }

    /// A pattern whose prepared play was used, prepared again, is the newest in the engine and in the manager's
    /// list: a fifth prepare lets the same oldest go in both, and a reset prepares again the set the engine held
    /// (until 7 December the manager kept its first place, and the reset brought back the light impact the engine
    /// had let go: four uploads, not three).
    @Test func aPatternPreparedAgainAfterItsPlayIsTheNewestInTheEngineAndOnTheNextOne() async {
        let setup = Setup()
        let impacts = [ImpactStyle.light, .medium, .heavy, .soft].map { HapticFeedback.impact($0).pattern }
        setup.manager.prepare(pattern: Self.noPulse)
        for impact in impacts.prefix(3) { setup.manager.prepare(pattern: impact) }
        setup.manager.play(pattern: Self.noPulse)
        setup.clock.advance(by: 1)
        setup.manager.prepare(pattern: Self.noPulse)
        setup.manager.prepare(pattern: impacts[3])
        setup.recorder.unplug()
        await setup.log.waitForRecovery(count: 1)
        setup.recorder.clearRecords()
        setup.recorder.replug()
        await setup.log.waitForRecovery(count: 2)
        let uploads = setup.recorder.records().filter { if case .prepare = $0.action { true } else { false } }
        #expect(uploads.count == 3, "the medium, heavy and soft impacts: \(uploads.map { $0.action })")
    }

    /// A pattern held prepared, prepared again, is the newest: the next prepare lets the oldest other go, so its
    /// play is still the prepared pulse's trigger (until 7 December it kept its age and was the one let go).
    @Test func aPatternHeldPreparedAndPreparedAgainIsNotTheOneANewPrepareLetsGo() {
        let setup = Setup()
        let impacts = [ImpactStyle.light, .medium, .heavy, .soft].map { HapticFeedback.impact($0).pattern }
        for impact in impacts { setup.manager.prepare(pattern: impact) }
        setup.manager.prepare(pattern: impacts[0])
        setup.manager.prepare(pattern: Self.noPulse)
        let mark = setup.recorder.records().count
        setup.manager.play(pattern: impacts[0])
        let played = setup.recorder.records().dropFirst(mark).map { $0.action }
        #expect(played.contains { if case .trigger = $0 { true } else { false } }, "\(played)")
    }

    /// A continuous stretch 50 ms in: prepared, it uploads no pulse.
    static let noPulse = HapticPattern(
        events: [
            HapticEvent(
                type: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 0.3)],
                relativeTime: 0.05, duration: 0.2)
        ], parameters: [])
}

/// What the manager's log says when the capability check finds nothing: the engine's own words for its first
/// open, with the fix when a device is there that this process may not write.
@Suite struct HardwareUnavailableReasonTests {
    static let advice = "To fix: install the rule."

    @Test func aPadThisProcessMayNotWriteIsNamedWithTheFix() throws {
        let denied = DeviceSelectionRuleTests.device(
            7, name: "DualSense", access: .denied(reason: "permission denied: read not permitted (access(2))"))
        let reason = try #require(
            EngineOutputProvider.unavailableReason(
                .firstRumbleDevice, among: [denied], forceDevices: false, advice: Self.advice))
        #expect(reason.hasPrefix("DualSense (/dev/input/event7): denied (permission denied"), "\(reason)")
        #expect(reason.hasSuffix(Self.advice), "\(reason)")
    }

    @Test func aForceDeviceLeftOutIsNamedWithTheOptInAndTakenWithIt() throws {
        let stick = DeviceSelectionRuleTests.device(9, name: "PID Stick", gamepad: false, forceDevice: true)
        let reason = try #require(
            EngineOutputProvider.unavailableReason(
                .firstRumbleDevice, among: [stick], forceDevices: false, advice: Self.advice))
        #expect(reason.contains("PID Stick (/dev/input/event9) is a force-feedback device"), "\(reason)")
        #expect(!reason.contains(Self.advice))
        #expect(
            EngineOutputProvider.unavailableReason(
                .firstRumbleDevice, among: [stick], forceDevices: true, advice: Self.advice) == nil)
    }

    @Test func noDeviceIsSaidSoAndADrivableOneGivesNoReason() {
        #expect(
            EngineOutputProvider.unavailableReason(.firstRumbleDevice, among: [], forceDevices: false)
                == "no rumble-capable input device found")
        #expect(
            EngineOutputProvider.unavailableReason(
                .firstRumbleDevice, among: [DeviceSelectionRuleTests.device(3)], forceDevices: false) == nil)
    }
}

/// What the manager's watch makes of each device that appears or changes while haptics are off: a device the
/// engine would open turns them on; one it would open but may not write is told once, with the fix, until its
/// access changes; anything else is passed over. (The watch's telling was untested: the kernel tests run as root,
/// who may write every node.)
@Suite struct HardwareWatchTests {
    typealias Watch = EngineOutputProvider.HardwareWatch
    static let advice = "To fix: install the rule."

    @Test func aPadThisProcessMayNotWriteIsToldOnceUntilItsAccessChanges() {
        var watch = Watch(forceDevices: false)
        let denied = DeviceSelectionRuleTests.device(7, name: "DualSense", access: .denied(reason: "permission denied"))
        let heard = watch.hear(denied, selection: .firstRumbleDevice, advice: Self.advice)
        guard case .denied(let reason) = heard else {
            Issue.record("a pad this process may not write was not told: \(heard)")
            return
        }
        #expect(reason.hasPrefix("DualSense (/dev/input/event7): denied (permission denied"), "\(reason)")
        #expect(reason.hasSuffix(Self.advice), "\(reason)")
        #expect(watch.hear(denied, selection: .firstRumbleDevice, advice: Self.advice) == .ignored, "told once")
        // udev set the node read-only for this user: another access, told again.
        let readOnly = DeviceSelectionRuleTests.device(
            7, name: "DualSense", access: .readOnly(reason: "permission denied"))
        #expect(watch.hear(readOnly, selection: .firstRumbleDevice, advice: Self.advice) != .ignored)
        // The rule installed: the pad is taken; denied again later (unplugged and plugged into a port the rule
        // does not match), it is told again.
        #expect(watch.hear(DeviceSelectionRuleTests.device(7), selection: .firstRumbleDevice) == .connected)
        #expect(watch.hear(denied, selection: .firstRumbleDevice, advice: Self.advice) != .ignored)
    }

    @Test func aDeviceTheSelectionWouldNotTakeIsPassedOverWithoutAWord() {
        var watch = Watch(forceDevices: false)
        let silent = DeviceSelectionRuleTests.device(4, rumble: false, access: .denied(reason: "permission denied"))
        let other = DeviceSelectionRuleTests.device(5, name: "Other", uniq: "cc", access: .denied(reason: "denied"))
        let pad = DeviceSelectionRuleTests.device(6)
        #expect(watch.hear(silent, selection: .firstRumbleDevice) == .ignored, "no rumble: nothing to tell")
        #expect(watch.hear(other, selection: .id(pad.id)) == .ignored, "another pad than the one named")
        let stick = DeviceSelectionRuleTests.device(9, name: "PID Stick", gamepad: false, forceDevice: true)
        #expect(watch.hear(stick, selection: .firstRumbleDevice) == .ignored, "a force device without the opt-in")
        var optedIn = Watch(forceDevices: true)
        #expect(optedIn.hear(stick, selection: .firstRumbleDevice) == .connected)
    }

}
