// HapticManager: the single entry point for haptics in an app. One line to play a named pattern or a
// tap; everything that can go wrong (no device, unplug, a corrupt file) is absorbed here and logged, never
// thrown at the caller.
public import AHAP
internal import AHAPFiles
public import HapticRendering
import LinuxHaptics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Logging
public import Observation

/// The app-facing façade over the engine: preloads the app's patterns, plays them by name, plays taps, and
/// recovers on its own when the engine stops or is reset (a gamepad unplugged and plugged back).
@Observable
@MainActor
public final class HapticManager {
    /// The instance an app uses; its patterns come from the default `Haptics/` folder.
    public static let shared = HapticManager()

    /// Whether haptics can play now. False without a capable device, and after a failed recovery; true
    /// again once the device comes back (the engine's reset). Observable; only the manager changes it.
    public private(set) var engineAvailable = false
    /// The prepared patterns whose player the engine keeps for every play (an uploaded pulse), as this manager
    /// last read them from its engine (`ManagedEngineAdapter.keptPlayers()`): a play of one starts its player
    /// directly. The starts hold no reference and are read on a play with no reference count changed, next to
    /// `engineAvailable` in this object's memory (the first of its stored properties);
    /// `keptPlayers` holds the players and their patterns (so that an identity's storage is not reused meanwhile).
    /// Read again after every call that can change the engine's prepared slots (`followKeptPlayers()`): the
    /// manager makes all of them, on its actor. Four entries, as many as the engine keeps prepared
    /// (`ManagedEngineAdapter.preparedLimit`).
    @ObservationIgnored private var keptStarts = InlineArray<4, KeptStart?>(repeating: nil)
    /// Whether the app stopped haptics (`stop()`) and has not started them again: the device is let go, and every
    /// call plays nothing meanwhile. Observable; only `stop()` and `start()` change it.
    public private(set) var isStopped = false

    /// The patterns `preloadPatterns()` loads: `Haptics/<name>.ahap`.
    public static let preloadedPatternNames = ["heartbeat", "capacitor_charge", "thud"]
    /// The cache of parsed patterns stays under this many bytes (the target: a pattern cache under 1 MB).
    public static let cacheByteLimit = 1 << 20
    static let patternExtension = "ahap"

    @ObservationIgnored private let resolver: any HapticResourceResolving
    @ObservationIgnored private let engineProvider: any HapticEngineProvider
    @ObservationIgnored private let logger: Logger
    @ObservationIgnored private var engine: (any ManagedHapticEngine)? {
        didSet {
            ownEngine = (engine as? ManagedEngineAdapter).map { Unmanaged.passUnretained($0) }
            // Another engine's count says nothing of this one's slots: they are read whatever it is.
            keptVersion = nil
            followKeptPlayers()
        }
    }
    /// `engine` when it is this library's own (every provider here builds one): a play calls it directly, with no
    /// protocol witness and no retain, and its kept players are started from `keptStarts`. Unmanaged, since
    /// `engine` holds it.
    @ObservationIgnored private var ownEngine: Unmanaged<ManagedEngineAdapter>?
    @ObservationIgnored private var keptPlayers: [ManagedEngineAdapter.KeptPlayer] = []
    /// The engine's `preparedVersion` when `keptStarts` was read; nil for none read.
    @ObservationIgnored private var keptVersion: Int?
    /// Bumped for every engine built, so callbacks of a replaced engine are recognised and ignored.
    @ObservationIgnored private var engineGeneration = 0
    @ObservationIgnored private var cache: [String: HapticPattern] = [:]
    /// The estimated in-memory size of `cache`.
    @ObservationIgnored private(set) var cacheByteCount = 0
    /// The patterns `prepare(pattern:)` was asked for, oldest first, as many as an engine keeps prepared: a new
    /// engine (a reset, a device plugged in) prepares them again, so they stay one `write()` away.
    @ObservationIgnored private var preparedPatterns: [HapticPattern] = []
    /// The files the resolver gave for audio events' plain file names (`success.wav`), by that name.
    @ObservationIgnored private var resolvedSounds: [String: String] = [:]
    /// Names `play(_:)` found no loadable file for, so that they are not read and logged on every play; at most
    /// `unloadableLimit` (past them a name is read and logged each time), forgotten with the cache.
    @ObservationIgnored private var unloadable: Set<String> = []
    static let unloadableLimit = 256
    /// The names `preloadPatterns` was asked for, in order, so a rebuilt engine re-caches what the app expects.
    @ObservationIgnored private var preloadNames: [String] = []
    /// `preloadNames` as a set: a long list of names is looked up in it, not searched (20,000 names took 6 s).
    @ObservationIgnored private var preloadNameSet: Set<String> = []
    /// Watches for a capable device while haptics are off: none at launch, or an engine that could not be
    /// built or started again.
    @ObservationIgnored private var hardwareWatch: Task<Void, Never>?

    /// A manager reading patterns through `resolver`, on the first rumble-capable gamepad, played on
    /// `actuators` (`.automatic` or `.hd`: a DualSense's voice coils, a Switch controller's HD rumble; the
    /// default, its motors) at `locality` (Core Haptics' `createEngine(withLocality:)`: `.leftTrigger`,
    /// `.rightTrigger` and `.triggers` play on an Xbox Wireless Controller's trigger motors over Bluetooth).
    public convenience init(
        resolver: any HapticResourceResolving = DefaultHapticResourceResolver(), actuators: HapticActuators = .rumble,
        locality: HapticLocality = .all
    ) {
        let logger = Logger(label: "haptics.manager")
        self.init(
            resolver: resolver,
            engineProvider: EngineOutputProvider.firstGamepad(logger: logger, actuators: actuators, locality: locality),
            logger: logger)
    }

    /// A manager on the engines `engineProvider` builds. The capability check runs first: without capable
    /// hardware no engine is created and `engineAvailable` stays false until a capable device is plugged in,
    /// which the provider watches for; then the engine is built, started, and preloads what was asked for.
    public init(
        resolver: any HapticResourceResolving, engineProvider: any HapticEngineProvider, logger: Logger
    ) {
        self.resolver = resolver
        self.engineProvider = engineProvider
        self.logger = logger
        startHaptics()
    }

    isolated deinit {
        hardwareWatch?.cancel()
    }

    /// The names currently cached, sorted.
    public var cachedPatternNames: [String] { cache.keys.sorted() }

    // MARK: Public calls: none throws, none reports failure to the caller

    /// Parses and caches `heartbeat`, `capacitor_charge` and `thud` once (`preloadedPatternNames`). A missing or
    /// corrupt file is logged and skipped; the others still load. Calling it again does nothing.
    public func preloadPatterns() {
        preloadPatterns(Self.preloadedPatternNames)
    }

    /// Parses and caches the app's own patterns `names` (`Haptics/<name>.ahap`, through the resolver) ahead, so
    /// that their first play reads no file. A missing or corrupt file is logged and skipped; a name cached already
    /// is not read again. Asked for while haptics are off, they are read once an engine runs, and again on every
    /// engine rebuilt after an unplug.
    public func preloadPatterns(_ names: [String]) {
        for name in names where preloadNameSet.insert(name).inserted { preloadNames.append(name) }
        guard engineAvailable else { return }
        for name in names where cache[name] == nil && !unloadable.contains(name) && !load(name) {
            if unloadable.count < Self.unloadableLimit { unloadable.insert(name) }
        }
    }

    /// Plays the pattern `name` now, fire-and-forget: a cached one, else `name.ahap` read through the resolver on
    /// its first play and cached (`preloadPatterns()` reads the app's three ahead; a read on the main actor takes
    /// a file's parse, so preload what must not wait for it). A name with no file, or whose file does not load,
    /// plays nothing and is logged once (it is looked for again when the engine is rebuilt).
    public func play(_ name: String) {
        // The stored value, not the observed property: a view that plays while it renders depends on nothing.
        guard _engineAvailable else { return }
        if let pattern = cache[name] {
            playing(pattern, "playing pattern \(name)")
            return
        }
        guard !unloadable.contains(name) else { return }
        guard load(name), let pattern = cache[name] else {
            if unloadable.count < Self.unloadableLimit { unloadable.insert(name) }
            return
        }
        playing(pattern, "playing pattern \(name)")
    }

    /// Plays one tap without a file; `intensity` and `sharpness` are clamped to 0...1 (NaN counts as 0).
    /// Rapid calls (wheel detents) replace each other rather than queue: a new tap cancels the one playing.
    public func playTransientEvent(intensity: Double, sharpness: Double) {
        let intensity = Self.unitClamped(intensity), sharpness = Self.unitClamped(sharpness)
        withEngine("playing a transient") { try $0.playTransient(intensity: intensity, sharpness: sharpness) }
    }

    /// Plays a pattern that is not in the cache (the feedback vocabulary builds them in code). An audio event
    /// naming a plain file (`success.wav`) plays the file the resolver finds for it, as a pattern's name does.
    public func play(pattern: HapticPattern) {
        playing(soundsResolved(pattern), "playing a pattern")
    }

    /// Gets the device ready for an imminent haptic: opens it, so the first one does not pay for that.
    public func prepare() {
        withEngine("preparing the engine") { try $0.prepare() }
    }

    /// Gets ready to play `pattern`: a single-pulse pattern (an impact, the selection tick) is uploaded ahead and
    /// stays uploaded, so every `play(pattern:)` of it reaches the device as one `write()` (a play while it still
    /// sounds starts it over). Four patterns at most stay prepared, each holding a device slot: preparing a fifth
    /// lets the oldest go. Preparing a pattern that is prepared already makes it the newest (the four prepared last
    /// are kept, and prepared again on a new engine). Asked for while haptics
    /// are off, or before a reset, it is prepared on the next engine. A pattern no engine plays (a number that is
    /// not one, a time past `HapticPattern.maximumTime`: only one built in code holds them) is logged and changes
    /// nothing: it lets no prepared pattern go (until 6 December it did).
    public func prepare(pattern: HapticPattern) {
        let pattern = soundsResolved(pattern)
        if let problem = pattern.boundsDiagnostic() {
            logger.info(
                "preparing a pattern failed",
                metadata: ["error": "the pattern cannot be played: \(problem)"])
            return
        }
        // The newest, whether it was listed or not, as the engine holds it.
        preparedPatterns.removeAll { $0 == pattern }
        preparedPatterns.append(pattern)
        if preparedPatterns.count > ManagedEngineAdapter.preparedLimit { preparedPatterns.removeFirst() }
        withEngine("preparing a pattern") { try $0.prepare(pattern) }
        followKeptPlayers()
    }

    /// Stops haptics and lets the device go, as an app does when it goes to the background, or when its user turns
    /// haptics off and another program may want the pad (Core Haptics' `stop`): what plays stops, the device's
    /// descriptor is closed (the kernel erases the effects it held, prepared pulses too), and no device is watched
    /// for. Until `start()` every call plays nothing and `engineAvailable` is false; what is asked for meanwhile
    /// (`prepare(pattern:)`, `preloadPatterns(_:)`) is done then. The cached patterns stay. Stopping a stopped
    /// manager does nothing.
    public func stop() {
        guard !isStopped else { return }
        isStopped = true
        hardwareWatch?.cancel()
        hardwareWatch = nil
        releaseEngine()
        engineAvailable = false
        logger.info("haptics stopped by the app; the device is let go until start()")
    }

    /// Starts haptics again after `stop()`, as at launch: the capability check, then a new engine on the device
    /// there now (the pad may have been unplugged, or replaced, meanwhile), on which what was prepared is prepared
    /// again and what was asked to be preloaded and is not cached is parsed. Without a capable device haptics stay
    /// off until one is plugged in. Does nothing unless the manager is stopped.
    public func start() {
        guard isStopped else { return }
        isStopped = false
        startHaptics()
        logger.info("haptics started again by the app", metadata: ["available": "\(engineAvailable)"])
    }

    /// The capability check, then an engine built and started (`restoreEngine`); without capable hardware no
    /// engine is created, and the manager watches for a device.
    private func startHaptics() {
        guard engineProvider.hardwareSupportsHaptics() else {
            // Why, when the provider can tell: most often a pad this user may not write yet (no udev rule).
            logger.info(
                "no rumble-capable device this process may drive; haptics are off until one is there",
                metadata: engineProvider.hardwareUnavailableReason().map { ["reason": "\($0)"] })
            setAvailable(false)
            return
        }
        restoreEngine()
    }

    /// Builds and starts a new engine in place of the one before (if any), its cache emptied (`restoreEngine`).
    private func rebuildEngine() {
        cache.removeAll()
        unloadable.removeAll()
        cacheByteCount = 0
        restoreEngine()
    }

    /// Builds and starts a new engine in place of the one before (if any); once it runs, what was prepared on the
    /// one before (or asked for while there was none) is prepared on it, oldest first, and what was asked to be
    /// preloaded and is not cached is parsed.
    private func restoreEngine() {
        setAvailable(buildAndStartEngine())
        guard engineAvailable else { return }
        for pattern in preparedPatterns { withEngine("preparing a pattern again") { try $0.prepare(pattern) } }
        followKeptPlayers()
        if !preloadNames.isEmpty { preloadPatterns(preloadNames) }
    }

    /// Runs `body` on the engine when haptics are available; a failure is logged and ends here (a gone device
    /// also reaches the stopped handler, which decides about recovery). It reads the flag's storage, not the
    /// observable property: a play is no reason for an observer to depend on `engineAvailable`, and the
    /// registrar's bookkeeping would stand between every play and its write. It is inlined, and `what` is made
    /// only for the log: a play's path to its write is the engine's call alone (a call here, a closure and the
    /// message built ahead cost a prepared play more microseconds, cold, than the rest of the manager's part).
    @inline(__always)
    private func withEngine(_ what: @autoclosure () -> String, _ body: (any ManagedHapticEngine) throws -> Void) {
        guard _engineAvailable, let engine else { return }
        logged(what()) { try body(engine) }
    }

    /// Plays `pattern` as `withEngine` does: a pattern whose player the engine keeps (`keptStarts`) is that
    /// player's start, inlined here; anything else goes to the engine in a call of its own, so that what a kept
    /// play runs is a few hundred bytes of code (under emulation each page of code, and each call into another,
    /// costs a cold play about a microsecond).
    @inline(__always)
    private func playing(_ pattern: HapticPattern, _ what: @autoclosure () -> String) {
        guard _engineAvailable else { return }
        if startKeptPlayer(of: pattern) { return }
        playOnEngine(pattern, what())
    }

    /// Plays `pattern` on the engine, on this library's own engine without its protocol (a prepared player that
    /// the engine does not keep is found there), and follows the prepared slots the play may have changed.
    @inline(never)
    private func playOnEngine(_ pattern: HapticPattern, _ what: @autoclosure () -> String) {
        if let ownEngine {
            logged(what()) { try Self.play(pattern, on: ownEngine) }
            followKeptPlayers()
        } else {
            withEngine(what()) { try $0.play(pattern) }
        }
    }

    /// `engine.play(pattern)`, held by its owner meanwhile. Not isolated: a closure made in the manager's
    /// isolation would check the executor first (four runtime calls before the play).
    @inline(__always)
    private nonisolated static func play(_ pattern: HapticPattern, on engine: Unmanaged<ManagedEngineAdapter>) throws {
        try engine._withUnsafeGuaranteedRef { try $0.play(pattern) }
    }

    /// Starts the kept player of `pattern`, found by the pattern's identity (a few words compared an entry, in this
    /// object's own memory); false when there is none or its start failed. Then the entry is dropped and the play
    /// goes the engine's way, which tries the player again and forgets it when a reset invalidated it; the entries
    /// are read again after that play, so a player the engine still keeps comes back.
    @inline(__always)
    private func startKeptPlayer(of pattern: HapticPattern) -> Bool {
        let identity = PreparedPatternIdentity(pattern)
        for index in keptStarts.indices {
            guard let kept = keptStarts[index], kept.identity == identity else { continue }
            do throws(HapticEngineError) {
                try kept.start.start()
                return true
            } catch {
                keptStarts[index] = nil
                keptVersion = nil
                return false
            }
        }
        return false
    }

    /// Reads the engine's kept players again when its prepared slots changed since the last read (or the engine
    /// did): after every call that can fill or empty them, so that `keptStarts` never names a player the engine let
    /// go of.
    private func followKeptPlayers() {
        guard let adapter = ownEngine?.takeUnretainedValue() else {
            keptStarts = InlineArray(repeating: nil)
            keptPlayers = []
            keptVersion = nil
            return
        }
        let version = adapter.preparedVersion
        guard version != keptVersion else { return }
        let kept = adapter.keptPlayers()
        keptStarts = InlineArray(repeating: nil)
        var index = 0
        for player in kept where index < keptStarts.count {
            guard let start = UnretainedStart(player.player) else { continue }
            keptStarts[index] = KeptStart(identity: PreparedPatternIdentity(player.pattern), start: start)
            index += 1
        }
        keptPlayers = kept
        keptVersion = version
    }

    /// A kept player's start and the identity of its pattern.
    private struct KeptStart {
        let identity: PreparedPatternIdentity
        let start: UnretainedStart
    }

    /// Runs `body`; a failure is logged as `what` failing.
    @inline(__always)
    private func logged(_ what: @autoclosure () -> String, _ body: () throws -> Void) {
        do {
            try body()
        } catch {
            logger.info("\(what()) failed", metadata: ["error": "\(error)"])
        }
    }

    static func unitClamped(_ value: Double) -> Double {
        guard !value.isNaN else { return 0 }
        return Swift.min(Swift.max(value, 0), 1)
    }

    // MARK: Loading

    /// Reads and caches `name.ahap`; false (logged) when there is no such file, it does not load, or the cache
    /// has no room for it.
    @discardableResult
    private func load(_ name: String) -> Bool {
        guard let url = resolver.url(forResource: name, withExtension: Self.patternExtension) else {
            logger.info("pattern file not found; skipped", metadata: ["pattern": "\(name)"])
            return false
        }
        let pattern: HapticPattern
        do {
            pattern = Self.soundsFound(beside: url, in: try HapticPattern(contentsOf: url))
        } catch {
            logger.info("pattern file does not load; skipped", metadata: ["file": "\(url.path)", "error": "\(error)"])
            return false
        }
        let size = Self.estimatedByteCount(of: pattern)
        guard cacheByteCount + size <= Self.cacheByteLimit else {
            logger.info(
                "pattern skipped: the cache would exceed its limit",
                metadata: ["pattern": "\(name)", "bytes": "\(size)", "cached": "\(cacheByteCount)"])
            return false
        }
        cache[name] = pattern
        cacheByteCount += size
        return true
    }

    /// `pattern`, read from `file`, with each audio event's relative path that names a file beside it made that
    /// file's absolute path: a pattern's sounds are found next to it, as `HapticEngine.playPattern(from:)` finds
    /// them, whatever folder the resolver read it from. Other paths are left to the engine's own folders
    /// (`audioResourceDirectories`), and a path that leaves its folder to the engine's refusal.
    static func soundsFound(beside file: URL, in pattern: HapticPattern) -> HapticPattern {
        let folder = file.deletingLastPathComponent()
        var pattern = pattern
        for index in pattern.events.indices where pattern.events[index].type == .audioCustom {
            guard let path = pattern.events[index].waveformPath, !path.hasPrefix("/"),
                AudioResourcePath.refusal(of: path) == nil
            else { continue }
            let beside = AudioResourcePath.candidates(for: path, in: [folder.path])[0]
            if HapticResourceDirectory.isFile(beside) { pattern.events[index].waveformPath = beside }
        }
        return pattern
    }

    /// `pattern` with each audio event that names a plain file (`success.wav`: no folder) given the file the
    /// resolver finds for it (`url(forResource: "success", withExtension: "wav")`), so that an app's own resolver
    /// serves the sounds of the patterns it builds in code, as it serves its pattern files; a name it does not
    /// find is left to the engine's folders. Found files are remembered by name: a feedback's play looks up
    /// nothing twice.
    private func soundsResolved(_ pattern: HapticPattern) -> HapticPattern {
        guard pattern.events.contains(where: { $0.type == .audioCustom }) else { return pattern }
        var pattern = pattern
        for index in pattern.events.indices where pattern.events[index].type == .audioCustom {
            guard let name = pattern.events[index].waveformPath, !name.contains("/") else { continue }
            if let found = resolvedSounds[name] {
                pattern.events[index].waveformPath = found
                continue
            }
            let file = URL(fileURLWithPath: name)
            guard !file.pathExtension.isEmpty,
                let url = resolver.url(
                    forResource: file.deletingPathExtension().lastPathComponent, withExtension: file.pathExtension)
            else { continue }
            resolvedSounds[name] = url.path
            pattern.events[index].waveformPath = url.path
        }
        return pattern
    }

    /// An estimate of what a parsed pattern occupies: the stored size of every value it holds (events, their
    /// parameters, dynamic parameters, curves and their points) plus the text of its metadata.
    static func estimatedByteCount(of pattern: HapticPattern) -> Int {
        var bytes = MemoryLayout<HapticPattern>.stride
        bytes += pattern.events.count * MemoryLayout<HapticEvent>.stride
        bytes += pattern.events.reduce(0) { total, event in
            total + event.parameters.count * MemoryLayout<HapticEventParameter>.stride
                + (event.waveformPath?.utf8.count ?? 0)
        }
        bytes += pattern.dynamicParameters.count * MemoryLayout<HapticDynamicParameter>.stride
        bytes += pattern.parameterCurves.count * MemoryLayout<HapticParameterCurve>.stride
        bytes += pattern.parameterCurves.reduce(0) { total, curve in
            total + curve.controlPoints.count * MemoryLayout<HapticParameterCurve.ControlPoint>.stride
        }
        bytes += pattern.metadata?.entries.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } ?? 0
        return bytes
    }

    // MARK: Engine lifecycle and recovery

    private func watchForHardware() {
        hardwareWatch = engineProvider.watchForHardware { [weak self] in
            Task { @MainActor in self?.hardwareConnected() }
        }
    }

    /// Sets `engineAvailable`. Haptics off, the provider watches for a capable device (`hardwareConnected`), so
    /// that nothing leaves them off for good: an engine that could not be built or started has nothing of its
    /// own to wait with, and one whose restart failed for another reason than a missing device waits for no
    /// device. An engine that does wait may reset first: whichever comes first builds the new engine, and the
    /// other is then ignored. Haptics on, the watch ends.
    private func setAvailable(_ available: Bool) {
        engineAvailable = available
        if available {
            hardwareWatch?.cancel()
            hardwareWatch = nil
        } else if hardwareWatch == nil {
            watchForHardware()
        }
    }

    /// A capable device may have been plugged in while haptics were off: build and start a new engine (the
    /// one that failed, if any, is stopped), and preload what the app asked for. Ends in one log message with
    /// `recovery` metadata.
    private func hardwareConnected() {
        guard !engineAvailable, hardwareWatch != nil, engineProvider.hardwareSupportsHaptics() else {
            logger.debug("a device event changed nothing", metadata: ["recovery": "connected"])
            return
        }
        rebuildEngine()
        logger.info(
            "a rumble-capable device was plugged in",
            metadata: ["available": "\(engineAvailable)", "recovery": "connected"])
    }

    /// Builds an engine, installs the recovery handlers (capturing the manager weakly) and starts it.
    /// Returns whether the engine runs; any failure leaves no engine behind.
    private func buildAndStartEngine() -> Bool {
        releaseEngine()
        let generation = engineGeneration
        let built: any ManagedHapticEngine
        do {
            built = try engineProvider.makeEngine()
        } catch {
            logger.info("creating the haptic engine failed; haptics are off", metadata: ["error": "\(error)"])
            return false
        }
        built.setRecoveryHandlers(
            stopped: { [weak self] reason in
                Task { @MainActor in self?.engineStopped(reason: reason, generation: generation) }
            },
            reset: { [weak self] in
                Task { @MainActor in self?.engineReset(generation: generation) }
            })
        do {
            try built.start()
        } catch {
            logger.info("starting the haptic engine failed; haptics are off", metadata: ["error": "\(error)"])
            built.stop()
            return false
        }
        engine = built
        return true
    }

    /// Stops the engine (if any) and lets it go; the callbacks it queued meanwhile are ignored (their generation
    /// is not the manager's).
    private func releaseEngine() {
        engine?.stop()
        engine = nil
        engineGeneration += 1
    }

    /// Stopped without `stop()`: one restart; if that fails, haptics are off until the engine's reset or a
    /// capable device plugged in (`setAvailable`). An idle shutdown is no failure: the engine let the device go
    /// and its next play opens it again, so it stays as it is. Each recovery callback ends in exactly one log
    /// message carrying `recovery` metadata.
    private func engineStopped(reason: String, generation: Int) {
        guard generation == engineGeneration, let engine else {
            logger.debug("ignored a stopped callback of a replaced engine", metadata: ["recovery": "stopped"])
            return
        }
        guard reason != HapticEngineStoppedReason.idleTimeout.rawValue else {
            logger.info("haptic engine idle; the next play opens the device", metadata: ["recovery": "stopped"])
            return
        }
        do {
            try engine.start()
            setAvailable(true)
            logger.info("haptic engine stopped; restarted", metadata: ["reason": "\(reason)", "recovery": "stopped"])
        } catch {
            setAvailable(false)
            logger.info(
                "haptic engine stopped; the restart failed, haptics are off until the device returns",
                metadata: ["reason": "\(reason)", "error": "\(error)", "recovery": "stopped"])
        }
    }

    /// The engine's output was rebuilt: build a fresh engine with fresh handlers, re-parse and re-cache every
    /// pattern, start. Any failure leaves haptics off, silently.
    private func engineReset(generation: Int) {
        guard generation == engineGeneration else {
            logger.debug("ignored a reset callback of a replaced engine", metadata: ["recovery": "reset"])
            return
        }
        rebuildEngine()
        logger.info(
            "haptic engine reset; rebuilt", metadata: ["available": "\(engineAvailable)", "recovery": "reset"])
    }
}
