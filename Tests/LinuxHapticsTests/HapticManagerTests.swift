// HapticManager's rules on an engine that records and fails on demand: no device, preload once,
// skipped files, unknown names, clamping, and the stopped/reset recovery.
import AHAPFiles
import Foundation
@testable import LinuxHaptics
@testable import AppHaptics
import LinuxHapticsTesting
import Observation
import Synchronization
import Testing
@_spi(Internals) import LinuxSystem

@MainActor
@Suite struct HapticManagerTests {
    static func manager(
        hardware: Bool = true, folder: URL = AppAssets.folder, log: RecordingLog = RecordingLog()
    ) -> (HapticManager, RecordingEngineProvider, CountingResolver) {
        let provider = RecordingEngineProvider(hardwarePresent: hardware)
        let resolver = CountingResolver(directory: folder)
        let manager = HapticManager(resolver: resolver, engineProvider: provider, logger: log.logger)
        return (manager, provider, resolver)
    }

    @Test func withoutADeviceNothingIsCreatedAndEveryCallIsASilentNoOp() {
        let log = RecordingLog()
        let (manager, provider, resolver) = Self.manager(hardware: false, log: log)
        #expect(manager.engineAvailable == false)
        #expect(provider.state.withLock { $0.capabilityChecks } == 1)
        #expect(provider.engines.isEmpty, "the capability check comes before any engine")
        manager.preloadPatterns()
        manager.play("thud")
        manager.playTransientEvent(intensity: 1, sharpness: 1)
        manager.prepare()
        manager.prepare(pattern: HapticFeedback.selection.pattern)
        manager.play(pattern: HapticFeedback.selection.pattern)
        #expect(resolver.lookups.load(ordering: .relaxed) == 0)
        #expect(manager.cachedPatternNames.isEmpty)
        #expect(manager.engineAvailable == false)
    }

    /// Without hardware the manager's one log line says why, as the provider tells it (a pad this user may not
    /// write, and the fix): until 6 December it said only "no rumble-capable device".
    @Test func withoutADeviceTheLogSaysWhyAsTheProviderTellsIt() {
        let log = RecordingLog()
        let provider = RecordingEngineProvider(hardwarePresent: false)
        let reason = "DualSense (/dev/input/event1): denied (permission denied). To fix: install the rule."
        provider.state.withLock { $0.unavailableReason = reason }
        _ = HapticManager(
            resolver: CountingResolver(directory: AppAssets.folder), engineProvider: provider, logger: log.logger)
        #expect(log.entries.contains { $0.message.contains("haptics are off") && $0.message.contains(reason) })
    }

    @Test func aDevicePluggedInLaterTurnsHapticsOnAndPreloads() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(hardware: false, log: log)
        manager.preloadPatterns()
        #expect(manager.engineAvailable == false)
        #expect(provider.engines.isEmpty)
        provider.plugIn()
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable)
        #expect(provider.engines.count == 1)
        #expect(
            manager.cachedPatternNames == ["capacitor_charge", "heartbeat", "thud"], "the preload asked for earlier")
        manager.play("thud")
        let engine = try #require(provider.latest)
        #expect(engine.state.withLock { $0.played.count } == 1)
        // Once haptics are on, the watch is no longer needed: cancelled before the recovery's log message.
        #expect(provider.state.withLock { $0.watchCancelled })
    }

    @Test func preloadTwiceDoesTheWorkOnce() throws {
        let (manager, provider, resolver) = Self.manager()
        #expect(manager.engineAvailable)
        manager.preloadPatterns()
        #expect(manager.cachedPatternNames == ["capacitor_charge", "heartbeat", "thud"])
        #expect(resolver.lookups.load(ordering: .relaxed) == 3)
        manager.preloadPatterns()
        #expect(resolver.lookups.load(ordering: .relaxed) == 3, "no second round of look-ups")
        #expect(manager.cacheByteCount > 0 && manager.cacheByteCount < HapticManager.cacheByteLimit)
        manager.play("heartbeat")
        let engine = try #require(provider.latest)
        let heartbeat = try HapticPattern(contentsOf: AppAssets.url("heartbeat.ahap"))
        #expect(engine.state.withLock { $0.played } == [heartbeat])
    }

    @Test func aMissingAndACorruptFileAreSkippedTheOtherLoads() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        try FileManager.default.copyItem(
            at: AppAssets.url("thud.ahap"), to: scratch.url.appendingPathComponent("thud.ahap"))
        _ = try scratch.write(#"{"Pattern": [{"Event": "#, to: "capacitor_charge.ahap")
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(folder: scratch.url, log: log)
        manager.preloadPatterns()
        #expect(manager.cachedPatternNames == ["thud"])
        #expect(log.contains("not found") && log.contains("heartbeat"), "the missing file is logged")
        #expect(log.contains("does not load") && log.contains("capacitor_charge.ahap"), "the corrupt file is logged")
        manager.play("heartbeat")
        manager.play("capacitor_charge")
        manager.play("thud")
        #expect(try #require(provider.latest).state.withLock { $0.played.count } == 1)
    }

    /// A name with no file plays nothing, and says so once: until 5 December it was silent, and so was a name
    /// whose file was there but not among the three preloaded.
    @Test func anUnknownNameIsLoggedOnceAndPlaysNothing() throws {
        let log = RecordingLog()
        let (manager, provider, resolver) = Self.manager(log: log)
        manager.preloadPatterns()
        let lookups = resolver.lookups.load(ordering: .relaxed)
        for _ in 0..<3 {
            manager.play("no-such-pattern")
            manager.play("")
        }
        #expect(try #require(provider.latest).state.withLock { $0.played.isEmpty })
        #expect(log.entries.filter { $0.message.contains("not found") }.count == 2, "\(log.entries)")
        #expect(resolver.lookups.load(ordering: .relaxed) == lookups + 2, "each name is looked for once")
    }

    /// `play("detent")` plays Haptics/detent.ahap, which `preloadPatterns()` does not read: read on its first
    /// play, then from the cache.
    @Test func aNameNotPreloadedIsReadOnItsFirstPlayAndCached() throws {
        let (manager, provider, resolver) = Self.manager()
        manager.play("detent")
        manager.play("detent")
        let played = try #require(provider.latest).state.withLock { $0.played }
        let detent = try HapticPattern(contentsOf: AppAssets.folder.appendingPathComponent("detent.ahap"))
        #expect(played.count == 2 && played.allSatisfy { $0.events == detent.events })
        #expect(resolver.lookups.load(ordering: .relaxed) == 1)
        #expect(manager.cachedPatternNames == ["detent"])
    }

    /// An app preloads its own patterns by name: read once, played from the cache, not read again when asked
    /// again, and read again on the engine rebuilt after a replug. (Only the three reference patterns could be
    /// preloaded: an app's own were read on their first play, on the main actor.)
    @Test func anAppsOwnPatternsArePreloadedByNameAndAgainOnARebuiltEngine() async throws {
        let log = RecordingLog()
        let (manager, provider, resolver) = Self.manager(log: log)
        manager.preloadPatterns(["detent", "error"])
        #expect(manager.cachedPatternNames == ["detent", "error"])
        #expect(resolver.lookups.load(ordering: .relaxed) == 2)
        manager.preloadPatterns(["detent"])
        manager.play("detent")
        #expect(resolver.lookups.load(ordering: .relaxed) == 2, "read once, played from the cache")
        let first = try #require(provider.latest)
        first.devicePresent.store(false, ordering: .relaxed)
        first.fireStopped("gameControllerDisconnect")
        await log.waitForRecovery(count: 1)
        first.devicePresent.store(true, ordering: .relaxed)
        first.fireReset()
        await log.waitForRecovery(count: 2)
        #expect(manager.engineAvailable && provider.engines.count == 2)
        #expect(manager.cachedPatternNames == ["detent", "error"], "read again on the rebuilt engine")
        #expect(resolver.lookups.load(ordering: .relaxed) == 4)
    }

    @Test func transientValuesAreClamped() throws {
        let (manager, provider, _) = Self.manager()
        manager.playTransientEvent(intensity: 1.7, sharpness: -0.2)
        manager.playTransientEvent(intensity: 0.25, sharpness: 0.75)
        manager.playTransientEvent(intensity: .nan, sharpness: .infinity)
        let sent = try #require(provider.latest).state.withLock { $0.transients }
        #expect(sent.map(\.intensity) == [1, 0.25, 0])
        #expect(sent.map(\.sharpness) == [0, 0.75, 1])
    }

    @Test func theCacheStaysUnderItsLimit() throws {
        // A pattern of 40 000 transients is well over 1 MB in memory: it is skipped, the others load.
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let events = (0..<40_000).map { index in
            HapticEvent(
                type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
                relativeTime: Double(index) / 1000)
        }
        let huge = try HapticPattern(events: events, parameters: []).ahapData()
        try huge.write(to: scratch.url.appendingPathComponent("heartbeat.ahap"))
        for name in ["thud", "capacitor_charge"] {
            try FileManager.default.copyItem(
                at: AppAssets.url("\(name).ahap"), to: scratch.url.appendingPathComponent("\(name).ahap"))
        }
        let log = RecordingLog()
        let (manager, _, _) = Self.manager(folder: scratch.url, log: log)
        manager.preloadPatterns()
        #expect(manager.cachedPatternNames == ["capacitor_charge", "thud"])
        #expect(manager.cacheByteCount <= HapticManager.cacheByteLimit)
        #expect(log.contains("exceed"))
    }

    @Test func aPatternsSoundsAreFoundBesideItInTheResolversFolderNotOnlyInTheEngines() throws {
        // thud.ahap in a folder of the app's own, with beep.wav beside it: the engine is given the sound's path
        // there. Until 5 December it got "beep.wav", which the engine looks for only in the folder found at launch
        // (the `Haptics/` of `HapticResourceDirectory.searchOrder`), not the resolver's. A sound not beside the
        // pattern, and one leaving its folder, are left as they are for the engine to look for or refuse.
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let tap = HapticEvent(
            type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
            relativeTime: 0)
        let sounds = ["beep.wav", "elsewhere.wav", "../beep.wav"].map {
            HapticEvent(audioWaveformPath: $0, relativeTime: 0)
        }
        let events = [tap] + sounds
        try HapticPattern(events: events, parameters: []).ahapData()
            .write(to: scratch.url.appendingPathComponent("thud.ahap"))
        _ = try scratch.write("RIFF", to: "beep.wav")
        let (manager, provider, _) = Self.manager(folder: scratch.url)
        manager.preloadPatterns()
        manager.play("thud")
        let engine = try #require(provider.latest)
        let played = try #require(engine.state.withLock { $0.played }.first)
        #expect(
            played.events.compactMap(\.waveformPath)
                == [scratch.url.appendingPathComponent("beep.wav").path, "elsewhere.wav", "../beep.wav"])
    }

    /// A folder named like a resource is no file of it: the pattern's name finds nothing, a sound's name is left
    /// to the engine's folders, and a folder beside a pattern named like its sound is not that sound. Until 7
    /// December each was taken for the file (the engine was handed a folder to play, in place of its own copy).
    @Test func aFolderNamedLikeAResourceIsNotTakenForItsFile() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for folder in ["thud.ahap", "success.wav", "beep.wav"] {
            try FileManager.default.createDirectory(
                at: scratch.url.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let directory = HapticResourceDirectory(directory: scratch.url)
        #expect(directory.url(forResource: "thud", withExtension: "ahap") == nil)
        let (manager, provider, _) = Self.manager(folder: scratch.url)
        manager.play(pattern: HapticFeedback.notification(.success).pattern(withSound: .success))
        let engine = try #require(provider.latest)
        #expect(engine.state.withLock { $0.played }.first?.events.compactMap(\.waveformPath) == ["success.wav"])
        let file = scratch.url.appendingPathComponent("tap.ahap")
        let beside = HapticManager.soundsFound(
            beside: file,
            in: HapticPattern(events: [HapticEvent(audioWaveformPath: "beep.wav", relativeTime: 0)], parameters: []))
        #expect(beside.events.map(\.waveformPath) == ["beep.wav"])
    }

    /// A pattern built in code (a feedback with its sound, `success.wav`) gets its sound from the manager's own
    /// resolver, as a named pattern does: until 5 December the engine looked for it only in the `Haptics/` folder
    /// found at launch, whatever resolver the app gave. A name the resolver does not know is left for the engine.
    @Test func aSoundOfAPatternBuiltInCodeIsTheFileTheResolverFinds() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("RIFF", to: "success.wav")
        let (manager, provider, resolver) = Self.manager(folder: scratch.url)
        let feedback = HapticFeedback.notification(.success).pattern(withSound: .success)
        manager.prepare(pattern: feedback)
        manager.play(pattern: feedback)
        manager.play(pattern: feedback)
        let engine = try #require(provider.latest)
        let played = engine.state.withLock { $0.played }
        #expect(played.count == 2)
        #expect(
            played.allSatisfy {
                $0.events.compactMap(\.waveformPath) == [scratch.url.appendingPathComponent("success.wav").path]
            }, "\(played.map { $0.events.compactMap(\.waveformPath) })")
        #expect(resolver.lookups.load(ordering: .relaxed) == 1, "the sound is looked up once")
        let unknown = HapticPattern(
            events: [HapticEvent(audioWaveformPath: "nowhere.wav", relativeTime: 0)], parameters: [])
        manager.play(pattern: unknown)
        #expect(engine.state.withLock { $0.played }.last?.events.first?.waveformPath == "nowhere.wav")
    }

    /// A stop restarts the engine once and it plays on; but an idle shutdown is not restarted: the engine let the
    /// device go, the next play opens it again (restarted, the engine would open the device it had just let go,
    /// and let it go again a delay later, for ever).
    @Test(arguments: [("deviceError", 2), ("idleTimeout", 1)])
    func stoppedRestartsOnceAndKeepsPlayingButAnIdleShutdownWaitsForThePlay(reason: String, starts: Int)
        async throws
    {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        manager.preloadPatterns()
        let engine = try #require(provider.latest)
        engine.fireStopped(reason)
        await log.waitForRecovery(count: 1)
        #expect(engine.state.withLock { $0.starts } == starts)
        #expect(manager.engineAvailable)
        manager.play("thud")
        #expect(engine.state.withLock { $0.played.count } == 1)
    }

    @Test func whatWasPreparedIsPreparedAgainOnTheEngineAResetBuildsAndOnOneBuiltForALatePad() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        let impact = HapticFeedback.impact(.rigid).pattern
        let tick = HapticFeedback.selection.pattern
        manager.prepare(pattern: impact)
        manager.prepare(pattern: tick)
        manager.prepare(pattern: impact)
        try #require(provider.latest).fireReset()
        await log.waitForRecovery(count: 1)
        let rebuilt = try #require(provider.latest)
        #expect(provider.engines.count == 2)
        #expect(rebuilt.state.withLock { $0.prepared } == [tick, impact], "each once, the one prepared last last")
        // Asked for while there was no engine: prepared once one is built.
        let late = Self.manager(hardware: false, log: RecordingLog())
        late.0.prepare(pattern: tick)
        late.1.plugIn()
        for _ in 0..<10_000 where !late.0.engineAvailable { await Task.yield() }
        #expect(try #require(late.1.latest).state.withLock { $0.prepared } == [tick])
    }

    /// Names preloaded that have no file are remembered as such up to `unloadableLimit`, as those played are: a
    /// name past the limit is looked for again when played (preloading kept every one, until 6 December).
    @Test func missingNamesPreloadedAreRememberedUpToTheLimit() {
        let (manager, _, resolver) = Self.manager()
        let names = (0..<(HapticManager.unloadableLimit + 44)).map { "missing-\($0)" }
        manager.preloadPatterns(names)
        let lookups = resolver.lookups.load(ordering: .relaxed)
        #expect(lookups == names.count, "each name looked for once")
        manager.play(names[0])
        #expect(resolver.lookups.load(ordering: .relaxed) == lookups, "a name within the limit is not looked for again")
        manager.play(names[names.count - 1])
        #expect(resolver.lookups.load(ordering: .relaxed) == lookups + 1, "one past it is")
    }

    /// A pattern no engine plays, prepared, is logged with its reason and lets no prepared pattern go: four of them
    /// pushed a good one out of the four kept, and the next engine did not prepare it (until 6 December).
    @Test func preparingPatternsNoEnginePlaysLetsNoPreparedPatternGo() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        let impact = HapticFeedback.impact(.rigid).pattern
        manager.prepare(pattern: impact)
        for index in 0..<ManagedEngineAdapter.preparedLimit {
            var unplayable = FeedbackVocabulary.taps([.init(time: 0, intensity: .nan, sharpness: 0.5)])
            unplayable.events[0].relativeTime = Double(index)
            manager.prepare(pattern: unplayable)
        }
        let failures = log.entries.filter { $0.message.hasPrefix("preparing a pattern failed") }
        #expect(failures.count == 4)
        #expect(failures.allSatisfy { $0.message.contains("Pattern[0].Event.EventParameters[0].ParameterValue") })
        try #require(provider.latest).fireReset()
        await log.waitForRecovery(count: 1)
        #expect(try #require(provider.latest).state.withLock { $0.prepared } == [impact])
    }

    @Test func aPadPresentAtLaunchWhoseEngineCannotBeBuiltTurnsHapticsOnWhenOneIsPluggedIn() async throws {
        let log = RecordingLog()
        let provider = RecordingEngineProvider(hardwarePresent: true)
        provider.state.withLock { $0.failBuilds = true }
        let manager = HapticManager(
            resolver: CountingResolver(directory: AppAssets.folder), engineProvider: provider, logger: log.logger)
        manager.preloadPatterns()
        #expect(manager.engineAvailable == false)
        provider.state.withLock { $0.failBuilds = false }
        provider.plugIn()
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable && provider.engines.count == 1)
        #expect(manager.cachedPatternNames == ["capacitor_charge", "heartbeat", "thud"])
        #expect(provider.state.withLock { $0.watchCancelled }, "the watch ends once haptics are on")
    }

    @Test func aRestartThatFailsWithThePadStillThereTurnsHapticsOnWhenAPadIsPluggedIn() async throws {
        // A device error, then a restart that fails with the pad still there (access taken away, the driver
        // refusing): the engine waits for no device, so nothing of its own would ever reset it.
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        let first = try #require(provider.latest)
        first.devicePresent.store(false, ordering: .relaxed)
        first.fireStopped("deviceError")
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable == false)
        provider.plugIn()
        await log.waitForRecovery(count: 2)
        #expect(manager.engineAvailable && provider.engines.count == 2)
        #expect(first.state.withLock { $0.stops } == 1, "the engine that failed is released")
        #expect(try #require(provider.latest).hasHandlers)
    }

    @Test func unplugThenReplugFlipsAvailabilityAndRebuilds() async throws {
        let log = RecordingLog()
        let (manager, provider, resolver) = Self.manager(log: log)
        manager.preloadPatterns()
        let first = try #require(provider.latest)
        // Unplug: the restart fails, haptics are off, calls are silent no-ops.
        first.devicePresent.store(false, ordering: .relaxed)
        first.fireStopped("gameControllerDisconnect")
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable == false)
        #expect(first.state.withLock { $0.starts } == 2, "exactly one restart attempt")
        manager.play("thud")
        manager.playTransientEvent(intensity: 1, sharpness: 1)
        // Replug: the engine's reset rebuilds a new engine, re-registers handlers, re-parses, restarts.
        first.devicePresent.store(true, ordering: .relaxed)
        first.fireReset()
        await log.waitForRecovery(count: 2)
        #expect(manager.engineAvailable)
        let second = try #require(provider.latest)
        #expect(provider.engines.count == 2 && second !== first)
        #expect(first.state.withLock { $0.stops } == 1, "the old engine is released")
        #expect(second.hasHandlers && second.state.withLock { $0.starts } == 1)
        #expect(resolver.lookups.load(ordering: .relaxed) == 6, "every pattern parsed again")
        manager.play("thud")
        #expect(second.state.withLock { $0.played.count } == 1)
        // A late callback of the replaced engine changes nothing.
        first.devicePresent.store(false, ordering: .relaxed)
        first.fireStopped("gameControllerDisconnect")
        await log.waitForRecovery(count: 3)
        #expect(manager.engineAvailable)
    }

    /// `stop()` lets the engine go (and so the pad) and every call plays nothing until `start()`, which builds an
    /// engine, prepares on it what was prepared before and asked for meanwhile, and reads only the names not
    /// cached. Until 6 December a manager held its engine, and the pad, for its whole life.
    @Test func stopLetsTheEngineGoUntilStartWhichPreparesAndPreloadsWhatWasAskedMeanwhile() throws {
        let (manager, provider, resolver) = Self.manager()
        let impact = HapticFeedback.impact(.rigid).pattern
        let tick = HapticFeedback.selection.pattern
        manager.prepare(pattern: impact)
        manager.preloadPatterns()
        let first = try #require(provider.latest)
        let notified = Atomic<Bool>(false)
        withObservationTracking {
            _ = manager.isStopped
        } onChange: {
            notified.store(true, ordering: .relaxed)
        }
        manager.stop()
        #expect(manager.isStopped && !manager.engineAvailable)
        let heard = notified.load(ordering: .relaxed)
        #expect(heard, "observers hear isStopped change")
        #expect(first.state.withLock { $0.stops } == 1, "the engine is stopped and let go")
        manager.play("thud")
        manager.play(pattern: tick)
        manager.playTransientEvent(intensity: 1, sharpness: 1)
        manager.prepare()
        manager.prepare(pattern: tick)
        manager.preloadPatterns(["detent"])
        manager.stop()
        let reached = first.state.withLock { ($0.played.count, $0.transients.count, $0.prepares, $0.stops) }
        #expect(reached == (0, 0, 0, 1), "nothing reaches the stopped engine, and a second stop does nothing")
        #expect(resolver.lookups.load(ordering: .relaxed) == 3, "nothing is read while stopped")
        #expect(provider.engines.count == 1 && provider.state.withLock { $0.connected } == nil, "no device watched")

        manager.start()
        #expect(!manager.isStopped && manager.engineAvailable)
        let second = try #require(provider.latest)
        #expect(provider.engines.count == 2 && second !== first && second.hasHandlers)
        #expect(second.state.withLock { $0.prepared } == [impact, tick], "prepared again, and as asked meanwhile")
        #expect(manager.cachedPatternNames == ["capacitor_charge", "detent", "heartbeat", "thud"])
        #expect(resolver.lookups.load(ordering: .relaxed) == 4, "the cache stays: only detent is read")
        manager.play("thud")
        #expect(second.state.withLock { $0.played.count } == 1)
        manager.start()
        #expect(provider.engines.count == 2, "starting a started manager does nothing")
    }

    /// A stopped or reset callback the engine queued just before `stop()` does not start it again, nor build
    /// another: the engine's generation is over.
    @Test(arguments: [false, true])
    func aCallbackQueuedBeforeStopStartsNothing(reset: Bool) async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        let engine = try #require(provider.latest)
        if reset { engine.fireReset() } else { engine.fireStopped("deviceError") }
        manager.stop()
        await log.waitForRecovery(count: 1)
        #expect(manager.isStopped && !manager.engineAvailable)
        #expect(provider.engines.count == 1 && engine.state.withLock { $0.starts } == 1)
    }

    /// A manager stopped while it watched for a device watches no more: a pad plugged in then turns nothing on.
    /// Started without a capable device, it watches again, and the pad plugged in turns haptics on.
    @Test func aStoppedManagerWatchesForNoDeviceAndStartedWithoutOneWatchesAgain() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(hardware: false, log: log)
        manager.stop()
        // The watch task hears its cancel once it runs: on a busy machine, after `stop()` returns.
        let deadline = ContinuousClock.now + .seconds(30)
        while !provider.state.withLock({ $0.watchCancelled }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(provider.state.withLock { $0.watchCancelled }, "the watch ends with the stop")
        provider.plugIn()
        await log.waitForRecovery(count: 1)
        #expect(provider.engines.isEmpty && !manager.engineAvailable)
        provider.state.withLock {
            $0.hardwarePresent = false
            $0.connected = nil
        }
        manager.start()
        #expect(!manager.isStopped && !manager.engineAvailable && provider.engines.isEmpty)
        #expect(provider.state.withLock { $0.connected } != nil, "watching for a device again")
        provider.plugIn()
        await log.waitForRecovery(count: 2)
        #expect(manager.engineAvailable && provider.engines.count == 1)
    }

    @Test func engineAvailableIsObservable() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        let engine = try #require(provider.latest)
        let notified = Atomic<Bool>(false)
        withObservationTracking {
            _ = manager.engineAvailable
        } onChange: {
            notified.store(true, ordering: .relaxed)
        }
        engine.devicePresent.store(false, ordering: .relaxed)
        engine.fireStopped("gameControllerDisconnect")
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable == false)
        let heard = notified.load(ordering: .relaxed)
        #expect(heard, "observers hear engineAvailable change")
    }

    @Test func playingDoesNotMakeAnObserverDependOnAvailability() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        manager.preloadPatterns()
        let engine = try #require(provider.latest)
        let notified = Atomic<Bool>(false)
        // A view that plays while it renders tracks what it reads; the play itself reads nothing observable.
        withObservationTracking {
            manager.play("thud")
            manager.playTransientEvent(intensity: 1, sharpness: 1)
            manager.play(pattern: FeedbackVocabulary.taps([.init(time: 0, intensity: 1, sharpness: 1)]))
            manager.prepare()
        } onChange: {
            notified.store(true, ordering: .relaxed)
        }
        let reached = engine.state.withLock { ($0.played.count, $0.transients.count) }
        #expect(reached == (2, 1), "every call reached the engine")
        engine.devicePresent.store(false, ordering: .relaxed)
        engine.fireStopped("gameControllerDisconnect")
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable == false)
        let heard = notified.load(ordering: .relaxed)
        #expect(!heard, "a play registered a dependency on engineAvailable")
    }

    @Test func aResetWhoseRebuildFailsDegradesSilentlyUntilAPadIsPluggedIn() async throws {
        let log = RecordingLog()
        let (manager, provider, _) = Self.manager(log: log)
        let engine = try #require(provider.latest)
        provider.state.withLock { $0.failBuilds = true }
        engine.fireReset()
        await log.waitForRecovery(count: 1)
        #expect(manager.engineAvailable == false)
        manager.play("thud")
        manager.preloadPatterns()
        // No engine is left to reset: the manager's watch turns haptics on again.
        provider.state.withLock { $0.failBuilds = false }
        provider.plugIn()
        await log.waitForRecovery(count: 2)
        #expect(manager.engineAvailable && provider.engines.count == 2)
    }

    @Test func handlersDoNotKeepTheManagerAlive() async throws {
        let provider = RecordingEngineProvider(hardwarePresent: true)
        weak var released: HapticManager?
        do {
            let manager = HapticManager(
                resolver: HapticResourceDirectory(directory: AppAssets.folder), engineProvider: provider,
                logger: RecordingLog().logger)
            released = manager
            #expect(try #require(provider.latest).hasHandlers)
        }
        #expect(released == nil)
        // Firing the handlers of a released manager's engine is harmless.
        provider.latest?.fireStopped("engineDestroyed")
        provider.latest?.fireReset()
        await Task.yield()
    }
}
