// The device primitive on evdev: one FF_RUMBLE slot per device, updated in place (EVIOCSFF with its id) and
// played at every change; prepared pulses in slots of their own, so a transient starts with one write(). Slots belong to the
// descriptor: closing it (on unplug, stop, idle shutdown) releases them all, in the kernel, at once.
import HapticRendering
import LinuxInput
import Logging
import LinuxSystem

/// The one effect slot that carries the mix, as far as a change of level needs to know: whether an effect is
/// uploaded, the levels it holds and whether the kernel still plays it. Pure, so its decisions are unit-tested.
struct MixSlotState: Sendable, Equatable {
    /// The levels of the uploaded effect; nil when nothing is uploaded.
    var levels: MotorMagnitudes?
    /// Clock time until which the kernel plays the effect (0: not started, or stopped).
    var playingUntil = 0.0

    /// The device calls that put the motors at a level.
    enum Change: Sendable, Equatable {
        /// Nothing to do: off asked, and nothing of ours plays.
        case none
        /// Off while the effect plays: one `EV_FF` stop. The effect keeps its levels for a later play.
        case stop
        /// The effect already holds the levels: one `EV_FF` play, no update.
        case play
        /// `EVIOCSFF` into the existing slot, then a play.
        case updateThenPlay
        /// `EVIOCSFF` into a new slot, then a play.
        case uploadThenPlay
    }

    /// What it takes to put the motors at `target` at clock time `now`. With `explicitly` (a device re-attached,
    /// whose state is unknown) off is played as a zero rumble rather than assumed.
    func change(to target: MotorMagnitudes, explicitly: Bool, at now: Double) -> Change {
        if target.isOff && !explicitly { return levels != nil && playingUntil > now ? .stop : .none }
        guard let levels else { return .uploadThenPlay }
        return levels == target ? .play : .updateThenPlay
    }
}

final class EvdevOutput: MotorOutput {
    private struct MixSlot {
        var effect: UploadedEffect?
        var state = MixSlotState()
    }

    private struct PreparedSlot {
        var effect: UploadedEffect
        var lastUsed: UInt64
    }

    private struct PreparedSlots {
        var slots: [Int: PreparedSlot] = [:]
        var nextID = 0
        var uses: UInt64 = 0
    }

    let device: EventDevice
    let capabilities: OutputCapabilities
    private let clock: any HapticClock
    private let logger: Logger
    private let mix = Lock(MixSlot())
    private let prepared = Lock(PreparedSlots())

    init(device: EventDevice, driver: String?, clock: any HapticClock, logger: Logger) {
        self.device = device
        self.clock = clock
        self.logger = logger
        capabilities = OutputCapabilities(
            name: device.identity.name, deviceID: device.id, node: device.node,
            effectSlots: device.forceFeedback.maxEffects, isVirtual: false, driver: driver,
            renderProfile: .forDevice(driver: driver, identity: device.identity))
    }

    private static func rumble(_ mix: MotorMagnitudes) -> ForceFeedbackEffect {
        .rumble(strong: mix.strong, weak: mix.weak, lengthMilliseconds: OutputTiming.replayLengthMilliseconds)
    }

    func sendNeutral() throws(OutputFailure) {
        try setMix(.off, explicitly: true)
    }

    func apply(_ levels: MotorMagnitudes) throws(OutputFailure) {
        try setMix(levels, explicitly: false)
    }

    /// A non-zero level is the mix effect updated in place *and played*, because of how ff-memless treats an
    /// update: it clears the effect's "playing" flag and leaves the new level to its timer on the next tick. A
    /// stop arriving before that tick (our own, or the kernel's when the descriptor closes, even in a crash)
    /// then only clears "started", the driver is never called, and the motors keep the level from *before*
    /// the update, indefinitely. A play right after the update makes ff-memless call the driver at once with
    /// the new level and sets "playing" again, so any later stop reaches the driver. Off is that stop: the
    /// effect keeps its levels, and a later change to the same levels (the same pattern started again) is one
    /// play, with no update. With `explicitly` (a re-attached device) a zero rumble goes out even though nothing
    /// of ours plays yet.
    private func setMix(_ levels: MotorMagnitudes, explicitly: Bool) throws(OutputFailure) {
        try mix.withLock { (slot) throws(OutputFailure) in
            let now = clock.now
            let change = slot.state.change(to: levels, explicitly: explicitly, at: now)
            if change == .none { return }
            if change == .stop, let effect = slot.effect {
                try Self.translate { () throws(EventDeviceError) in try effect.stop() }
                slot.state.playingUntil = 0
                return
            }
            let effect: UploadedEffect
            if let existing = slot.effect {
                if change == .updateThenPlay {
                    // Forgotten first: an update that fails may have left the slot with either level.
                    slot.state.levels = nil
                    try Self.translate { () throws(EventDeviceError) in try existing.update(Self.rumble(levels)) }
                }
                effect = existing
            } else {
                effect = try upload(Self.rumble(levels))
                slot.effect = effect
            }
            slot.state.levels = levels
            try Self.translate { () throws(EventDeviceError) in try effect.play() }
            slot.state.playingUntil = now + OutputTiming.holdSeconds + OutputTiming.expiryMarginSeconds
        }
    }

    func keepAlive() throws(OutputFailure) {
        try mix.withLock { (slot) throws(OutputFailure) in
            guard let effect = slot.effect, slot.state.playingUntil > 0 else { return }
            // A play of a started effect restarts its replay window: one write, no upload.
            try Self.translate { () throws(EventDeviceError) in try effect.play() }
            slot.state.playingUntil = clock.now + OutputTiming.holdSeconds + OutputTiming.expiryMarginSeconds
        }
    }

    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        let length = min(pulse.duration * 1000, Double(UInt16.max)).rounded(.up)
        let effect = ForceFeedbackEffect.rumble(
            strong: pulse.mix.strong, weak: pulse.mix.weak, lengthMilliseconds: UInt16(max(length, 1)))
        // A prepared pulse never evicts: the mix slot matters more than a latency optimisation.
        let uploaded = try Self.translate { () throws(EventDeviceError) in try device.uploadEffect(effect) }
        return prepared.withLock { state in
            defer { state.nextID += 1 }
            state.uses += 1
            state.slots[state.nextID] = PreparedSlot(effect: uploaded, lastUsed: state.uses)
            return state.nextID
        }
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        let effect = prepared.withLock { state -> UploadedEffect? in
            state.uses += 1
            state.slots[id]?.lastUsed = state.uses
            return state.slots[id]?.effect
        }
        guard let effect else { throw OutputFailure(.closed, "the prepared effect \(id) was evicted or released") }
        try Self.translate { () throws(EventDeviceError) in try effect.play() }
    }

    func stop(prepared id: Int) throws(OutputFailure) {
        guard let effect = prepared.withLock({ $0.slots[id]?.effect }) else { return }
        try Self.translate { () throws(EventDeviceError) in try effect.stop() }
    }

    func release(prepared id: Int) {
        // Releasing the handle erases the slot (unless the descriptor is already closed).
        _ = prepared.withLock { $0.slots.removeValue(forKey: id) }
    }

    func close() {
        // Closing first: the kernel stops and erases every effect of the descriptor, so the handles dropped
        // below find it closed and issue no erase of their own.
        device.close()
        mix.withLock { $0 = MixSlot() }
        prepared.withLock { $0.slots.removeAll() }
    }

    func currentLevels() -> MotorMagnitudes? { nil }

    /// Uploads into a new slot; on `ENOSPC` evicts the least recently used prepared pulse and retries.
    private func upload(_ effect: ForceFeedbackEffect) throws(OutputFailure) -> UploadedEffect {
        while true {
            do throws(EventDeviceError) {
                return try device.uploadEffect(effect)
            } catch  where error.kind == .noEffectSlot {
                let evicted = prepared.withLock { state -> Int? in
                    guard let victim = state.slots.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key else {
                        return nil
                    }
                    state.slots[victim] = nil
                    return victim
                }
                guard let evicted else { throw Self.failure(from: error) }
                logger.info("evicted a prepared effect to make room for the mix", metadata: ["prepared": "\(evicted)"])
            } catch {
                throw Self.failure(from: error)
            }
        }
    }

    static func translate<T>(_ body: () throws(EventDeviceError) -> T) throws(OutputFailure) -> T {
        do throws(EventDeviceError) { return try body() } catch { throw failure(from: error) }
    }

    static func failure(from error: EventDeviceError) -> OutputFailure {
        let kind: OutputFailure.Kind
        switch error.kind {
        case .deviceGone, .notFound: kind = .deviceGone
        case .noEffectSlot: kind = .noSlot
        case .permissionDenied: kind = .permissionDenied
        case .noForceFeedback, .invalidRequest: kind = .unsupported
        case .closed: kind = .closed
        case .other: kind = .other
        }
        return OutputFailure(kind, error.description)
    }
}

/// Finds and opens the selected device, and follows it across unplug and replug by its stable id.
final class EvdevOutputSource: OutputSource {
    let selection: DeviceSelection
    /// With it, any other rumble-capable gamepad that appears while ours is gone takes its place.
    let adoptCompatibleDevice: Bool
    let monitorSource: DeviceMonitor.Source
    /// The device the engine is bound to once it opened one.
    private let bound = Lock<StableDeviceID?>(nil)
    /// A device a hot-plug event named, tried first on the next open.
    private let candidate = Lock<InputDevice?>(nil)

    init(selection: DeviceSelection, adoptCompatibleDevice: Bool, monitorSource: DeviceMonitor.Source) {
        self.selection = selection
        self.adoptCompatibleDevice = adoptCompatibleDevice
        self.monitorSource = monitorSource
        if case .id(let id) = selection { bound.withLock { $0 = id } }
    }

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        if selection == .allGamepads { return try openAllGamepads(clock: clock, logger: logger) }
        let (node, driver) = try resolveNode(logger: logger)
        let device: EventDevice
        do throws(EventDeviceError) {
            device = try EventDevice(node: node, logger: logger)
        } catch {
            throw EvdevOutput.failure(from: error)
        }
        guard device.forceFeedback.isRumbleCapable else {
            device.close()
            throw OutputFailure(.unsupported, "\(device.identity.name) (\(node)) has no rumble force feedback")
        }
        bound.withLock { $0 = device.id }
        return EvdevOutput(device: device, driver: driver, clock: clock, logger: logger)
    }

    private func openAllGamepads(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        let devices: [InputDevice]
        do throws(DeviceDiscoveryError) {
            devices = try DeviceDiscovery(logger: logger).devices()
        } catch {
            throw OutputFailure(.other, "\(error)")
        }
        let members = selection.devicesToOpen(among: devices).compactMap { candidate -> EvdevOutput? in
            do throws(EventDeviceError) {
                return EvdevOutput(
                    device: try EventDevice(node: candidate.node, logger: logger), driver: candidate.driver,
                    clock: clock, logger: logger)
            } catch {
                logger.info(
                    "skipping a gamepad that cannot be opened",
                    metadata: ["node": "\(candidate.node)", "error": "\(error)"])
                return nil
            }
        }
        guard !members.isEmpty else { throw OutputFailure(.notFound, "no writable rumble-capable gamepad found") }
        return BroadcastOutput(members: members)
    }

    /// The node to open and the driver behind it (for the render profile).
    private func resolveNode(logger: Logger) throws(OutputFailure) -> (node: String, driver: String?) {
        if let device = candidate.withLock({ $0 }) { return (device.node, device.driver) }
        let boundID = bound.withLock { $0 }
        if boundID == nil, case .node(let node) = selection {
            // A named node (maybe a by-id link): its driver, when udev can tell, only picks the render profile.
            let sysName = DeviceDiscovery.resolvedNode(node).split(separator: "/").last.map(String.init) ?? node
            return (node, DeviceDiscovery(logger: logger).device(sysName: sysName)?.driver)
        }
        let devices: [InputDevice]
        do throws(DeviceDiscoveryError) {
            devices = try DeviceDiscovery(logger: logger).devices()
        } catch {
            throw OutputFailure(.other, "\(error)")
        }
        let chosen: InputDevice?
        if let boundID {
            if let match = devices.first(where: { $0.id == boundID }) { return (match.node, match.driver) }
            if !adoptCompatibleDevice { throw OutputFailure(.notFound, "the device \(boundID) is not connected") }
            chosen = devices.first { selection.accepts($0, bound: boundID, adoptingCompatible: true) }
        } else {
            chosen = selection.devicesToOpen(among: devices).first
        }
        guard let chosen else {
            let denied = devices.first { $0.forceFeedback.isRumbleCapable && !$0.access.allowsForceFeedback }
            if let denied {
                throw OutputFailure(.permissionDenied, "\(denied.name) (\(denied.node)): \(denied.access)")
            }
            throw OutputFailure(.notFound, "no rumble-capable input device found")
        }
        return (chosen.node, chosen.driver)
    }

    /// Whether a device that appeared is ours (or, with the option, an acceptable replacement): the selection's
    /// rule (`DeviceSelection.accepts`), with a named node's links resolved now, when the device is there.
    private func accepts(_ device: InputDevice) -> Bool {
        selection.resolvingLinks().accepts(
            device, bound: bound.withLock { $0 }, adoptingCompatible: adoptCompatibleDevice)
    }

    /// How long a hot-plug watch that ended on its own waits before it starts again, doubling while it keeps
    /// failing.
    static let watchRestartDelays = (first: Duration.seconds(1), longest: Duration.seconds(60))

    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? {
        let watch = MonitorWatch()
        do throws(DeviceMonitorError) {
            follow(try DeviceMonitor(source: monitorSource, logger: logger), in: watch, logger: logger, handler)
        } catch {
            logger.info("no hot-plug watch yet; trying again shortly", metadata: ["error": "\(error)"])
            do throws(SystemCallError) {
                try Sys.startThread { [self] in
                    restart(watch, after: Self.watchRestartDelays.first, logger: logger, handler)
                }
            } catch {
                logger.info("no hot-plug watch: no thread to start it again", metadata: ["error": "\(error)"])
                return nil
            }
        }
        return watch
    }

    /// Delivers `monitor`'s events on its own thread. When the monitor stops on its own (its poll failed), that
    /// thread starts it again after the restart delay.
    private func follow(
        _ monitor: DeviceMonitor, in watch: MonitorWatch, logger: Logger,
        _ handler: @escaping @Sendable (OutputPresence) -> Void
    ) {
        let subscription = monitor.start({ [self] event in deliver(event, to: handler) }) { [self] stopped in
            guard !stopped, !watch.isCancelled else { return }
            logger.info("the hot-plug watch ended (its thread stopped); starting it again")
            restart(watch, after: Self.watchRestartDelays.first, logger: logger, handler)
        }
        guard let subscription else {
            logger.info("the hot-plug watch could not start its thread")
            return
        }
        watch.follow(subscription)
    }

    /// Waits `delay` (cut short by the watch's cancel) and starts a new monitor; waits twice as long, up to the
    /// longest delay, while that fails. Until it runs again, an unplug is noticed on the next write and a replug on
    /// the next play.
    private func restart(
        _ watch: MonitorWatch, after delay: Duration, logger: Logger,
        _ handler: @escaping @Sendable (OutputPresence) -> Void
    ) {
        var delay = delay
        while watch.sleep(for: delay) {
            do throws(DeviceMonitorError) {
                let restarted = try DeviceMonitor(source: monitorSource, logger: logger)
                // A device the engine waits for may have appeared while nothing watched.
                if let present = restarted.initialDevices.first(where: accepts) {
                    deliver(DeviceEvent(kind: .added, device: present), to: handler)
                }
                follow(restarted, in: watch, logger: logger, handler)
                return
            } catch {
                logger.info("the hot-plug watch could not start again", metadata: ["error": "\(error)"])
                delay = min(delay * 2, Self.watchRestartDelays.longest)
            }
        }
    }

    private func deliver(_ event: DeviceEvent, to handler: @Sendable (OutputPresence) -> Void) {
        switch event.kind {
        case .removed:
            if let boundID = bound.withLock({ $0 }), event.device.id == boundID { handler(.removed) }
        case .added, .changed:
            guard accepts(event.device) else { return }
            candidate.withLock { $0 = event.device }
            handler(.appeared)
            candidate.withLock { $0 = nil }
        }
    }
}

/// One engine's hot-plug watch: the device monitor it follows now, and the wait before a restart, both ended by
/// `cancel`. It runs on the monitor's own thread, with no task or queue: nothing wakes while devices stay put.
private final class MonitorWatch: OutputWatch {
    private struct State {
        var cancelled = false
        var subscription: DeviceMonitor.Subscription?
    }

    private let state = Lock(State())
    private let waiter = DeadlineWaiter()

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Follows `subscription` from now on; stops it at once when the watch was cancelled meanwhile.
    func follow(_ subscription: DeviceMonitor.Subscription) {
        let cancelled = state.withLock { state in
            if !state.cancelled { state.subscription = subscription }
            return state.cancelled
        }
        if cancelled { subscription.stop() }
    }

    /// Sleeps for `delay` unless cancelled first; whether the watch is still wanted.
    func sleep(for delay: Duration) -> Bool {
        guard !isCancelled else { return false }
        let (seconds, attoseconds) = delay.components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        waiter.wait(untilNanoseconds: MonotonicTime.nanoseconds() + nanoseconds)
        return !isCancelled
    }

    func cancel() {
        let subscription = state.withLock { state in
            state.cancelled = true
            defer { state.subscription = nil }
            return state.subscription
        }
        subscription?.stop()
        waiter.signal()
    }
}

/// Several pads driven as one output (`DeviceSelection.allGamepads`): every primitive goes to each; a pad
/// that is gone is closed and dropped, and only when none is left does the output report the device gone.
final class BroadcastOutput: MotorOutput {
    private struct State {
        var members: [EvdevOutput]
        /// A prepared pulse's id on each member, by member.
        var prepared: [Int: [ObjectIdentifier: Int]] = [:]
        var nextPrepared = 0
    }

    private let state: Lock<State>
    let capabilities: OutputCapabilities

    init(members: [EvdevOutput]) {
        state = Lock(State(members: members))
        capabilities = OutputCapabilities(
            name: "all gamepads (" + members.map(\.capabilities.name).joined(separator: ", ") + ")",
            effectSlots: members.compactMap(\.capabilities.effectSlots).min(), isVirtual: false,
            renderProfile: Self.sharedProfile(of: members))
    }

    /// One mix drives every member: the members' profile when they share one, else the generic profile.
    private static func sharedProfile(of members: [EvdevOutput]) -> RenderProfile {
        let profiles = Set(members.map(\.capabilities.renderProfile))
        return profiles.count == 1 ? profiles.first ?? .genericRumble : .genericRumble
    }

    /// Runs `body` on every member; drops the gone ones; fails if none is left or every member failed.
    private func each(_ body: (EvdevOutput) throws(OutputFailure) -> Void) throws(OutputFailure) {
        let members = state.withLock { $0.members }
        var failure: OutputFailure?
        var gone: [ObjectIdentifier] = []
        var succeeded = 0
        for member in members {
            do throws(OutputFailure) {
                try body(member)
                succeeded += 1
            } catch {
                if error.kind == .deviceGone {
                    member.close()
                    gone.append(ObjectIdentifier(member))
                } else {
                    failure = error
                }
            }
        }
        let left = state.withLock { state in
            state.members.removeAll { gone.contains(ObjectIdentifier($0)) }
            return state.members.count
        }
        if left == 0 { throw OutputFailure(.deviceGone, "every gamepad is gone") }
        // One pad refusing while another plays is that pad's problem; all of them refusing is the output's.
        if let failure, succeeded == 0 { throw failure }
    }

    func sendNeutral() throws(OutputFailure) { try each { (member) throws(OutputFailure) in try member.sendNeutral() } }
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) {
        try each { (member) throws(OutputFailure) in try member.apply(mix) }
    }
    func keepAlive() throws(OutputFailure) { try each { (member) throws(OutputFailure) in try member.keepAlive() } }

    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        var ids: [ObjectIdentifier: Int] = [:]
        let members = state.withLock { $0.members }
        do throws(OutputFailure) {
            for member in members { ids[ObjectIdentifier(member)] = try member.prepare(pulse) }
        } catch {
            for member in members { if let id = ids[ObjectIdentifier(member)] { member.release(prepared: id) } }
            throw error
        }
        return state.withLock { state in
            defer { state.nextPrepared += 1 }
            state.prepared[state.nextPrepared] = ids
            return state.nextPrepared
        }
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        guard let ids = state.withLock({ $0.prepared[id] }) else {
            throw OutputFailure(.closed, "the prepared effect \(id) was released")
        }
        try each { (member) throws(OutputFailure) in
            if let memberID = ids[ObjectIdentifier(member)] { try member.trigger(prepared: memberID) }
        }
    }

    func stop(prepared id: Int) throws(OutputFailure) {
        guard let ids = state.withLock({ $0.prepared[id] }) else { return }
        try each { (member) throws(OutputFailure) in
            if let memberID = ids[ObjectIdentifier(member)] { try member.stop(prepared: memberID) }
        }
    }

    func release(prepared id: Int) {
        let (ids, members) = state.withLock { state in (state.prepared.removeValue(forKey: id), state.members) }
        guard let ids else { return }
        for member in members { if let memberID = ids[ObjectIdentifier(member)] { member.release(prepared: memberID) } }
    }

    func close() {
        let members = state.withLock { state in
            defer { state.members = [] }
            return state.members
        }
        for member in members { member.close() }
    }

    func currentLevels() -> MotorMagnitudes? { nil }
}
