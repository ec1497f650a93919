// HapticManager's engine: a `HapticEngine` behind the `ManagedHapticEngine` seam, and the provider that builds
// one on any output after the capability check.
package import AHAP
public import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
public import Logging
import Synchronization

/// A `HapticEngine` as HapticManager drives it. Pattern players are fire-and-forget (the engine plays a
/// released player to its end); transients share one slot: a new tap cancels the previous one. A prepared
/// pattern keeps its player, one per pattern: when its opening was uploaded as a pulse, every play of it is that
/// pulse's trigger again (a play while it still sounds starts it over, as a second tap does); otherwise the player
/// waits for the one play it was prepared for, and later plays overlap as unprepared ones do. The C library
/// (LinuxHapticsC) drives its engines through it too.
package final class ManagedEngineAdapter: ManagedHapticEngine {
    package let engine: HapticEngine
    private let transient = Lock<(any HapticPatternPlayer)?>(nil)
    /// The last `mostPlaysSounding` fire-and-forget plays, oldest first: a play past them cancels the oldest.
    private let recentPlays = Lock<[any HapticAdvancedPatternPlayer]>([])
    /// At most this many ordinary plays sound together (prepared ones and the transient besides), as the sound
    /// effects' limit: past it the motors are long full anyway, and every start mixes every player sounding, so a
    /// game calling `play` a thousand times in a loop made each call slower than the last (24 s for 1,000 plays of
    /// a long pattern, until 6 December).
    package static let mostPlaysSounding = 32
    /// At most this many prepared players are kept: each may hold an effect slot of the device.
    static let preparedLimit = 4
    /// Prepared players, in slots a play takes from without a lock (`ClaimSlots`: one object and one block, so a
    /// play's lookup touches little memory); `preparing` serialises the calls that fill and empty them, and counts
    /// the fills, so the oldest goes when all are taken.
    private let prepared = ClaimSlots<PreparedPattern>(count: ManagedEngineAdapter.preparedLimit)
    private let preparing = Lock(0)
    /// Counts the fills and emptyings of the prepared slots: the same count twice, the same slots between.
    private let preparedChanges = Atomic(0)

    /// A player prepared for `pattern`, found again by the pattern's `identity`. An object, so that an empty slot
    /// is a null reference: a play's test for one is a compare, not a call working out the optional's case.
    private final class PreparedPattern: Sendable {
        let pattern: HapticPattern
        let identity: PreparedPatternIdentity
        let player: any HapticPatternPlayer
        /// The player's opening is an uploaded pulse: it stays for every play, not only the next.
        let keeps: Bool
        /// Which fill this was: the smallest is the oldest.
        let order: Int

        init(
            pattern: HapticPattern, identity: PreparedPatternIdentity, player: any HapticPatternPlayer, keeps: Bool,
            order: Int
        ) {
            self.pattern = pattern
            self.identity = identity
            self.player = player
            self.keeps = keeps
            self.order = order
        }
    }

    package init(engine: HapticEngine) {
        self.engine = engine
    }

    package func setRecoveryHandlers(
        stopped: @escaping @Sendable (String) -> Void, reset: @escaping @Sendable () -> Void
    ) {
        engine.stoppedHandler = { reason in stopped(reason.rawValue) }
        engine.resetHandler = reset
    }

    package func start() throws { try engine.start() }

    package func stop() {
        transient.withLock { $0 = nil }
        preparing.withLock { _ in
            for index in 0..<prepared.count { prepared.withClaimWaiting(index) { $0 = nil } }
            preparedChanges.add(1, ordering: .releasing)
        }
        engine.stop()
    }

    /// Opens the device ahead, so the first haptic does not pay for it.
    package func prepare() throws { try engine.start() }

    /// Prepares `pattern`'s player, in an empty slot or else the oldest fill's. One held already is made the
    /// newest fill instead, as the manager lists it (`HapticManager.prepare(pattern:)`): the four prepared last are
    /// kept, here and on the next engine alike (until 7 December a pattern prepared again kept its age here and
    /// became the newest in the manager's list, and a reset then prepared another set than the engine held).
    package func prepare(_ pattern: HapticPattern) throws {
        try engine.start()
        let held = preparing.withLock { fills in
            (0..<prepared.count).contains { index in
                prepared.withClaimWaiting(index) { entry in
                    guard let kept = entry, kept.pattern == pattern else { return false }
                    fills += 1
                    entry = PreparedPattern(
                        pattern: kept.pattern, identity: kept.identity, player: kept.player, keeps: kept.keeps,
                        order: fills)
                    return true
                }
            }
        }
        if held { return }
        let player = try engine.makePlayer(with: pattern)
        let keeps = try player.prepare()
        preparing.withLock { fills in
            fills += 1
            // An empty slot, or else the oldest fill's.
            let orders = (0..<prepared.count).map { index in prepared.withClaimWaiting(index) { $0?.order ?? Int.min } }
            let chosen = orders.indices.min { orders[$0] < orders[$1] } ?? 0
            prepared.withClaimWaiting(chosen) {
                $0 = PreparedPattern(
                    pattern: pattern, identity: PreparedPatternIdentity(pattern), player: player, keeps: keeps,
                    order: fills)
            }
            preparedChanges.add(1, ordering: .releasing)
        }
    }

    /// Inlined where the manager calls it on its own engine: a prepared play's way to its write is the player's
    /// start alone.
    @inline(__always)
    package func play(_ pattern: HapticPattern) throws {
        if playPrepared(pattern) { return }
        let player = try engine.makeAdvancedPlayer(with: pattern)
        try player.start(atTime: 0)
        let oldest = recentPlays.withLock { plays -> (any HapticAdvancedPatternPlayer)? in
            plays.append(player)
            return plays.count > Self.mostPlaysSounding ? plays.removeFirst() : nil
        }
        // Only one still playing is cancelled: cancelling one that ended would change its phase, and wake the
        // playback thread to plan again, on every play past the limit. A reset's invalid player reads as stopped.
        if let oldest, oldest.phase == .playing || oldest.phase == .paused { try? oldest.cancel() }
    }

    /// Starts the player prepared for `pattern`, found in its slot (and taken from it, unless it `keeps`): first by
    /// the pattern's identity (a few words compared a slot, no element read), then by equality. It starts inside
    /// the slot's claim, so the slot's entry holds the player for the call (no retain); a play of the same pattern
    /// on another thread meanwhile finds the slot held and plays the ordinary way. False when no player is
    /// prepared for `pattern` or its start failed (then it plays the ordinary way; a player a reset invalidated
    /// since it was prepared is forgotten).
    @inline(__always)
    private func playPrepared(_ pattern: HapticPattern) -> Bool {
        let identity = PreparedPatternIdentity(pattern)
        for pass in 0..<2 {
            for index in 0..<prepared.count {
                let found = prepared.withClaim(index) { entry -> PreparedPlay in
                    // Read in place: a bound copy would be retained.
                    guard entry != nil else { return .mismatch }
                    let matches =
                        pass == 0
                        ? entry.unsafelyUnwrapped.identity == identity : entry.unsafelyUnwrapped.pattern == pattern
                    guard matches else { return .mismatch }
                    let keeps = entry.unsafelyUnwrapped.keeps
                    // The slot holds the entry, and the entry its player, for the call: neither is retained.
                    let failure = Unmanaged.passUnretained(entry.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
                        kept -> HapticEngineError? in
                        do throws(HapticEngineError) {
                            try kept.player.start(atTime: 0)
                            return nil
                        } catch {
                            return error
                        }
                    }
                    if !keeps || failure?.kind == .playerInvalidated {
                        entry = nil
                        preparedChanges.add(1, ordering: .releasing)
                    }
                    return failure == nil ? .started : .failed
                }
                switch found {
                case .started?: return true
                case .failed?: return false
                case .mismatch?, nil: continue
                }
            }
        }
        return false
    }

    /// How many times the prepared slots were filled or emptied so far: unchanged between two reads, the slots
    /// hold the same entries (`keptPlayers()` then reads the same).
    package var preparedVersion: Int { preparedChanges.load(ordering: .acquiring) }

    /// The prepared patterns whose player stays prepared for every play (an uploaded pulse), with the player: what
    /// a caller that makes every call on this adapter from one thread may start directly, for as long as
    /// `preparedVersion` stays the same and the start does not fail (`HapticManager` does). Read after the version.
    package func keptPlayers() -> [KeptPlayer] {
        (0..<prepared.count).compactMap { index in
            prepared.withClaimWaiting(index) { slot in
                guard let entry = slot, entry.keeps else { return nil }
                return KeptPlayer(pattern: entry.pattern, player: entry.player)
            }
        }
    }

    /// A prepared pattern that keeps its player (`keptPlayers()`).
    package struct KeptPlayer: Sendable {
        package let pattern: HapticPattern
        package let player: any HapticPatternPlayer
    }

    /// What a prepared slot gave a play.
    private enum PreparedPlay {
        /// Not the pattern's.
        case mismatch
        /// Its player started.
        case started
        /// Its player's start failed: the play goes the ordinary way (once: not with another slot's player).
        case failed
    }

    package func playTransient(intensity: Double, sharpness: Double) throws {
        let tap = FeedbackVocabulary.Tap(time: 0, intensity: intensity, sharpness: sharpness)
        let player = try engine.makePlayer(with: FeedbackVocabulary.taps([tap]))
        let previous = transient.withLock { slot in
            defer { slot = player }
            return slot
        }
        // A player of an output that was reset since is already invalid: nothing left to cancel.
        try? previous?.cancel()
        try player.start(atTime: 0)
    }
}

/// Builds `HapticEngine`s on one output for HapticManager. For a device output, the capability check looks
/// for a gamepad that can rumble, that this process may write, and that matches the selection; discovery reads
/// sysfs, so it works without a udev daemon. Outputs other than a device always qualify.
public struct EngineOutputProvider: HapticEngineProvider {
    public let output: HapticOutputSelection
    public let options: HapticEngineOptions
    private let clock: any HapticClock
    private let logger: Logger

    /// - Parameters:
    ///   - output: where every engine plays; its device selection is what the capability check looks for.
    ///   - options: the options of every engine built.
    ///   - clock: the engines' clock; a manual clock (LinuxHapticsTesting) makes them run without a thread.
    ///   - logger: where the engines and the capability check log.
    public init(
        output: HapticOutputSelection, options: HapticEngineOptions = .init(),
        clock: any HapticClock = MonotonicClock(),
        logger: Logger
    ) {
        self.output = output
        self.options = options
        self.clock = clock
        self.logger = logger
    }

    /// The first rumble-capable gamepad this process may write, or without one the first such rumble device
    /// (`DeviceSelection.firstRumbleDevice`), played on `actuators` at `locality` (`HapticEngineOptions`).
    public static func firstGamepad(
        logger: Logger, actuators: HapticActuators = .rumble, locality: HapticLocality = .all
    ) -> EngineOutputProvider {
        // Audio events of the app's patterns name files beside them, in the Haptics/ folder.
        var options = HapticEngineOptions()
        options.actuators = actuators
        options.locality = locality
        options.audioResourceDirectories = HapticResourceDirectory.locate().map { [$0.directory.path] } ?? []
        return EngineOutputProvider(output: .device(.firstRumbleDevice), options: options, logger: logger)
    }

    public func hardwareSupportsHaptics() -> Bool {
        guard let selection = output.deviceSelection else { return true }
        guard let devices = try? listDevices() else { return false }
        return !selection.resolvingLinks().devicesToOpen(among: devices, forceDevices: options.allowsForceDevices)
            .isEmpty
    }

    public func hardwareUnavailableReason() -> String? {
        guard let selection = output.deviceSelection else { return nil }
        do throws(DeviceDiscoveryError) {
            return Self.unavailableReason(
                selection.resolvingLinks(), among: try listDevices(), forceDevices: options.allowsForceDevices)
        } catch {
            return "listing input devices failed: \(error)"
        }
    }

    /// The input devices there now. No node is opened: sysfs and `access(2)` tell which nodes the engine's first
    /// open would take.
    private func listDevices() throws(DeviceDiscoveryError) -> [InputDevice] {
        do throws(DeviceDiscoveryError) {
            return try DeviceDiscovery(logger: logger).devices(probing: .noNode)
        } catch {
            logger.info("listing input devices failed", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// Why an engine with `selection` finds nothing to open among `devices` (nil when it does): the engine's own
    /// words for its first open (`DeviceSelection.nothingToOpen`), with the fix (`advice`) when a device is
    /// there that this process may not write.
    static func unavailableReason(
        _ selection: DeviceSelection, among devices: [InputDevice], forceDevices: Bool,
        advice: @autoclosure () -> String = AccessAdvice.eventNodes()
    ) -> String? {
        guard selection.devicesToOpen(among: devices, forceDevices: forceDevices).isEmpty else { return nil }
        return reason(for: selection.nothingToOpen(among: devices, forceDevices: forceDevices), advice: advice())
    }

    /// The message of the engine's failure to find a device, with the fix (`advice`) for one it may not write.
    static func reason(for failure: OutputFailure, advice: @autoclosure () -> String = AccessAdvice.eventNodes())
        -> String
    {
        failure.kind == .permissionDenied ? "\(failure.message). \(advice())" : failure.message
    }

    /// Watches for input devices (through the options' monitor source) and calls `connected` for each one the
    /// engine's first open would take as it appears or changes (udev may grant access a moment after adding it).
    /// One it would take but may not write is logged with the fix, once until its access changes.
    public func watchForHardware(_ connected: @escaping @Sendable () -> Void) -> Task<Void, Never>? {
        guard let selection = output.deviceSelection else { return nil }
        let monitor: DeviceMonitor
        do throws(DeviceMonitorError) {
            // Its snapshot of the present nodes (which only names removals, ignored here) opens no node; each
            // node that appears or changes is probed as it comes.
            monitor = try DeviceMonitor(source: options.monitorSource, snapshot: nil, probing: .noNode, logger: logger)
        } catch {
            logger.info("cannot watch for gamepads; haptics stay off", metadata: ["error": "\(error)"])
            return nil
        }
        let forceDevices = options.allowsForceDevices
        return Task { [logger] in
            var watch = HardwareWatch(forceDevices: forceDevices)
            for await event in monitor where event.kind != .removed {
                switch watch.hear(event.device, selection: selection.resolvingLinks()) {
                case .connected:
                    connected()
                case .denied(let reason):
                    logger.info(
                        "a device that would play is there, but this process may not write it",
                        metadata: ["reason": "\(reason)"])
                case .ignored:
                    continue
                }
            }
        }
    }

    /// What `watchForHardware` makes of each device that appears or changes: a device the engine's first open
    /// would take is a connection; one it would take but may not write is told once, with the fix, until its
    /// access changes (udev may grant access a moment later, or the user installs the rule); anything else is
    /// passed over.
    struct HardwareWatch {
        let forceDevices: Bool
        /// The access each denied device was last told with.
        private var told: [StableDeviceID: DeviceAccess] = [:]

        init(forceDevices: Bool) { self.forceDevices = forceDevices }

        enum Outcome: Equatable {
            case connected
            /// Told why (`EngineOutputProvider.reason(for:advice:)`: the failure and its fix).
            case denied(reason: String)
            case ignored
        }

        /// `device`, which appeared or changed, against `selection` (its links resolved).
        mutating func hear(
            _ device: InputDevice, selection: DeviceSelection,
            advice: @autoclosure () -> String = AccessAdvice.eventNodes()
        ) -> Outcome {
            if selection.accepts(device, bound: nil, adoptingCompatible: false, forceDevices: forceDevices) {
                told[device.id] = nil
                return .connected
            }
            guard told[device.id] != device.access else { return .ignored }
            let failure = selection.nothingToOpen(among: [device], forceDevices: forceDevices)
            guard failure.kind == .permissionDenied else { return .ignored }
            told[device.id] = device.access
            return .denied(reason: EngineOutputProvider.reason(for: failure, advice: advice()))
        }
    }

    public func makeEngine() throws -> any ManagedHapticEngine {
        ManagedEngineAdapter(engine: HapticEngine(output: output, options: options, clock: clock, logger: logger))
    }
}

/// The addresses of a pattern value's three arrays' storage, its version, and its metadata's storage:
/// the same for every copy of one value (an app's cached pattern passed again). Storage holds the same
/// elements for as long as a copy refers to it (whoever keeps an identity keeps the pattern too), so two values of
/// one identity are equal. Read from the value's own words, not from the storage: a play finds its pattern
/// without touching the pattern's memory. A pattern built anew has another identity, and is found by
/// equality.
struct PreparedPatternIdentity: Equatable, Sendable {
    let events: UInt
    let parameters: UInt
    let curves: UInt
    let metadata: UInt
    let version: Double?

    init(_ pattern: borrowing HapticPattern) {
        events = Self.storage(of: pattern.events)
        parameters = Self.storage(of: pattern.dynamicParameters)
        curves = Self.storage(of: pattern.parameterCurves)
        metadata = Self.storage(of: pattern.metadata)
        version = pattern.version
    }

    /// The address of the storage a value of one reference (an array, a dictionary, optional metadata:
    /// 0 for nil) refers to: the value's only word (`HapticManagerEngineTests` checks the sizes).
    static func storage<Value>(of value: borrowing Value) -> UInt {
        withUnsafeBytes(of: value) { $0.load(as: UInt.self) }
    }
}
