// How the engine finds its evdev output and follows it across unplug and replug: device selection, the
// hot-plug watch, and the all-gamepads broadcast's members.
import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

/// Finds and opens the selected device, and follows it across unplug and replug by its stable id.
final class EvdevOutputSource: OutputSource {
    let selection: DeviceSelection
    /// With it, any other rumble-capable gamepad that appears while ours is gone takes its place.
    let adoptCompatibleDevice: Bool
    let monitorSource: DeviceMonitor.Source
    /// Which actuators to drive on a pad that has voice coils, and where they play (`HapticEngineOptions`).
    let actuators: HapticActuators
    let locality: HapticLocality
    /// Whether wheels and joysticks that run periodic effects themselves may be driven
    /// (`HapticEngineOptions.allowsForceDevices`), and the engine's gain their effects are compiled with.
    let allowsForceDevices: Bool
    let gain: Double
    /// Whether a device whose frames can be followed (`RenderProfile.followsDeviceFrames`) is planned on them:
    /// not when the engine was given a profile of its own, whose rhythm is then the device's.
    let followsFrames: Bool
    /// The device the engine is bound to once it opened one.
    private let bound = Lock<StableDeviceID?>(nil)
    /// A device a hot-plug event named, tried first on the next open.
    private let candidate = Lock<InputDevice?>(nil)
    /// Every event node as the last `open` listed them, when it listed them all (every open but one of a device
    /// a hot-plug event named); the hot-plug watch made next takes it as its snapshot rather than
    /// probing every node again, each probe an open and a close of the node, whose release in evdev waits out
    /// an RCU grace period. The engine makes its watch straight after an open. The listing opens no node
    /// (`DeviceDiscovery.Probing.noNode`): sysfs and `access(2)` say all the choice needs, and the open that
    /// follows is the one that reads the chosen node's bits and slots.
    private let lastListing = Lock<[InputDevice]?>(nil)

    init(
        selection: DeviceSelection, adoptCompatibleDevice: Bool, monitorSource: DeviceMonitor.Source,
        actuators: HapticActuators = .rumble, locality: HapticLocality = .all, allowsForceDevices: Bool = false,
        gain: Double = 1, followsFrames: Bool = true
    ) {
        self.selection = selection
        self.adoptCompatibleDevice = adoptCompatibleDevice
        self.monitorSource = monitorSource
        self.actuators = actuators
        self.locality = locality
        self.allowsForceDevices = allowsForceDevices
        self.gain = gain
        self.followsFrames = followsFrames
        if case .id(let id) = selection { bound.withLock { $0 = id } }
    }

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        lastListing.withLock { $0 = nil }
        if let refusal = selection.refusal(at: locality) { throw OutputFailure(.unsupported, refusal) }
        if selection == .allGamepads {
            return try openAllGamepads(clock: clock, logger: logger)
        }
        let (device, driver, listedID) = try openFirst(of: try resolveNodes(logger: logger), logger: logger)
        // The id hot-plug events carry for this node: the second of two identical pads is `X-2`, not `X`.
        let boundID = listedID ?? device.id
        let node = device.node
        guard device.forceFeedback.isRumbleCapable else {
            device.close()
            throw OutputFailure(.unsupported, "\(device.identity.name) (\(node)) has no rumble force feedback")
        }
        if device.forceFeedback.runsWaveformsItself {
            do throws(OutputFailure) {
                let output = try periodicEffectOutput(of: device, driver: driver, logger: logger)
                bound.withLock { $0 = boundID }
                return output
            } catch {
                device.close()
                throw error
            }
        }
        bound.withLock { $0 = boundID }
        if locality.isTrigger {
            do throws(OutputFailure) {
                return try triggerOutput(of: device, driver: driver, logger: logger)
            } catch {
                device.close()
                throw error
            }
        }
        let hd = hdOutput(of: device, driver: driver, logger: logger)
        if let output = hd.output { return output }
        return EvdevOutput(
            device: device, driver: driver, clock: clock, logger: logger, actuatorFallback: hd.fallback,
            diversion: Self.reportDiversion(for: device, logger: logger), followsFrames: followsFrames)
    }

    /// A wheel or joystick that runs periodic effects itself, when the engine may drive one: its patterns as effects
    /// the device plays (`PeriodicEffectStream`), with the pid profile and the engine's gain. Without the option,
    /// an error that names it: the device's force would move the controls in the user's hands.
    private func periodicEffectOutput(of device: EventDevice, driver: String?, logger: Logger)
        throws(OutputFailure) -> PeriodicEffectOutput
    {
        let name = "\(device.identity.name) (\(device.node))"
        guard allowsForceDevices else {
            throw OutputFailure(.unsupported, DeviceSelection.forceDeviceNotAllowed(name))
        }
        guard !locality.isTrigger, locality == .all else {
            throw OutputFailure(
                .unsupported, "\(name) has one force, not motors or actuators by side: locality must be all")
        }
        var capabilities = OutputCapabilities(device: device, driver: driver)
        capabilities.playsPeriodicEffects = true
        let profile = capabilities.renderProfile.withGain(capabilities.renderProfile.gain * gain)
        let stream: PeriodicEffectStream
        do throws(HapticEngineError) {
            stream = try PeriodicEffectStream(device: device, profile: profile, logger: logger)
        } catch {
            throw OutputFailure(.other, "the periodic effect stream cannot start: \(error)")
        }
        logger.info("playing periodic effects", metadata: ["node": "\(device.node)"])
        return PeriodicEffectOutput(
            device: device, stream: stream, actuatorsName: "periodic effects", capabilities: capabilities)
    }

    /// For an Xbox pad over Bluetooth whose hidraw node this user may write: the way its rumble joins the report
    /// our trigger engines write, so that one writer sets all four motors while they play.
    static func reportDiversion(for device: EventDevice, logger: Logger) -> ReportDiversion? {
        guard let actuators = HDActuators.find(identity: device.identity), actuators.kind == .triggerMotors,
            let node = actuators.node, actuators.writable
        else { return nil }
        return ReportDiversion(node: node, logger: logger)
    }

    /// The output playing on `device`'s HD actuators (voice coils, HD rumble) when they were asked for and can be
    /// had; otherwise, when they were asked for, why the rumble motors play instead (logged, and reported in the
    /// capabilities).
    private func hdOutput(of device: EventDevice, driver: String?, logger: Logger)
        -> (output: (any MotorOutput)?, fallback: String?)
    {
        guard actuators != .rumble else { return (nil, nil) }
        guard let coils = HDActuators.find(identity: device.identity), coils.kind != .triggerMotors else {
            // `automatic` asked for them only where the pad has them: nothing fell back on a pad without.
            guard actuators == .hd else { return (nil, nil) }
            return (
                nil,
                "\(device.identity.name) has no HD actuators this engine drives (a DualSense's voice coils, a "
                    + "Switch controller's HD rumble)"
            )
        }
        let refusal: String
        if coils.kind == .hdRumble, let node = coils.node {
            do throws(OutputFailure) {
                let output = try hdRumbleOutput(of: device, node: node, driver: driver, logger: logger)
                logger.info("playing on HD rumble", metadata: ["node": "\(node)", "pad": "\(device.node)"])
                return (output, nil)
            } catch {
                refusal = error.message
            }
        } else if let node = coils.node {
            do throws(EventDeviceError) {
                let hidraw = try HidrawDevice(node: node, logger: logger)
                do throws(OutputFailure) {
                    let stream = try VoiceCoilStream.bluetooth(
                        hidraw, locality: locality, gain: gain, logger: logger)
                    logger.info("playing on the voice coils", metadata: ["node": "\(node)", "pad": "\(device.node)"])
                    return (VoiceCoilOutput(device: device, stream: stream, kind: .voiceCoils, driver: driver), nil)
                } catch {
                    hidraw.close()
                    refusal = "the voice-coil stream cannot start: \(error)"
                }
            } catch  where error.kind == .permissionDenied {
                refusal = AccessAdvice.hidrawNode(node)
            } catch {
                refusal = "\(node) cannot be opened: \(error)"
            }
        } else if let card = coils.soundCardNumber, coils.writable {
            do throws(OutputFailure) {
                let stream = try VoiceCoilStream.soundCard(
                    number: card, locality: locality, gain: gain, logger: logger)
                restoreAudioHaptics(of: device, logger: logger)
                logger.info("playing on the voice coils", metadata: ["card": "\(card)", "pad": "\(device.node)"])
                return (VoiceCoilOutput(device: device, stream: stream, kind: .voiceCoils, driver: driver), nil)
            } catch {
                refusal = "\(error)"
            }
        } else {
            refusal = coils.unavailableReason ?? "the voice coils cannot be reached"
        }
        logger.notice(
            "the HD actuators cannot be driven; playing on the rumble motors",
            metadata: ["pad": "\(device.node)", "reason": "\(refusal)"])
        return (nil, refusal)
    }

    /// A Switch controller's HD rumble on its hidraw `node`: a member of the stream this process already has there,
    /// or of a new one with a guard process that puts the actuators at rest if this process stops writing. Fails
    /// with a message that says why (naming the udev rule when the node may not be written).
    private func hdRumbleOutput(of device: EventDevice, node: String, driver: String?, logger: Logger)
        throws(OutputFailure) -> HDRumbleOutput
    {
        let member = try HDRumbleMember.joining(
            node, locality: locality, mirrorsSides: HDActuators.hasOneActuator(device.identity), gain: gain
        ) { () throws(OutputFailure) -> HDRumbleStream in
            let hidraw = try Self.openHidraw(node, logger: logger)
            let keeper: any SilenceKeeper
            do throws(OutputFailure) {
                keeper = try Self.silenceKeeper(
                    for: hidraw, silence: SwitchRumbleReport.rest(counter: 0).bytes, logger: logger)
            } catch {
                hidraw.close()
                throw error
            }
            do throws(HapticEngineError) {
                return try HDRumbleStream(device: hidraw, keeper: keeper, logger: logger)
            } catch {
                keeper.close()
                hidraw.close()
                throw OutputFailure(.other, "the HD rumble stream \(error.message)")
            }
        }
        return HDRumbleOutput(device: device, stream: member, kind: .hdRumble, driver: driver)
    }

    /// The trigger motors of `device` for an engine made with a trigger locality: an Xbox Wireless Controller over
    /// Bluetooth whose hidraw node this user may write. Any other pad, or no access, is an error that says so:
    /// there is nothing to fall back to, the motors a trigger locality names being nowhere else.
    private func triggerOutput(of device: EventDevice, driver: String?, logger: Logger)
        throws(OutputFailure) -> XboxReportOutput
    {
        let name = device.identity.name
        guard let actuators = HDActuators.find(identity: device.identity), actuators.kind == .triggerMotors else {
            throw OutputFailure(
                .unsupported,
                "\(name) has no trigger motors this engine drives, so locality \(locality.rawValue) cannot play "
                    + "on it: an Xbox Wireless Controller over Bluetooth has them (over USB, xpad leaves no way to "
                    + "them)")
        }
        guard let node = actuators.node else {
            throw OutputFailure(.unsupported, actuators.unavailableReason ?? "\(name) has no hidraw node")
        }
        let output = try XboxReportOutput(device: device, node: node, driver: driver, logger: logger)
        logger.info("playing on the trigger motors", metadata: ["node": "\(node)", "pad": "\(device.node)"])
        return output
    }

    /// `node` opened for writing, or why not (naming the udev rule when this user may not write it).
    static func openHidraw(_ node: String, logger: Logger) throws(OutputFailure) -> HidrawDevice {
        do throws(EventDeviceError) {
            return try HidrawDevice(node: node, logger: logger)
        } catch  where error.kind == .permissionDenied {
            throw OutputFailure(.permissionDenied, AccessAdvice.hidrawNode(node))
        } catch {
            throw OutputFailure(EvdevOutput.failure(from: error).kind, "\(node) cannot be opened: \(error)")
        }
    }

    /// The guard process that writes `silence` to `hidraw` when this process stops writing to it. When it cannot
    /// start (the fork failed), the stream must not play: a killed or stopped process would leave the pad vibrating.
    static func silenceKeeper(for hidraw: HidrawDevice, silence: [UInt8], logger: Logger) throws(OutputFailure)
        -> any SilenceKeeper
    {
        if let refusal = guardRefusal(processID: Sys.processID) { throw OutputFailure(.unsupported, refusal) }
        do throws(EventDeviceError) {
            return try HidrawSilenceGuard(
                device: hidraw, silence: silence, timeoutMilliseconds: HDRumbleStream.silenceTimeoutMilliseconds,
                logger: logger)
        } catch {
            throw OutputFailure(
                .other,
                "the silence guard, which puts the pad at rest if this process is killed, cannot start (\(error))")
        }
    }

    /// Why a silence guard forked by process `processID` could not silence the pad when it dies; nil when it can.
    /// The first process of a PID namespace (the app of a container run without an init) takes the namespace's
    /// every other process with it when it dies: the kernel kills them all, the guard before it writes (until 7
    /// December HD rumble played there unguarded, and a killed app left a Switch pad vibrating).
    static func guardRefusal(processID: Int32) -> String? {
        guard processID == 1 else { return nil }
        return "this process is the first of its PID namespace (a container's, run without an init): when it dies "
            + "the kernel kills the silence guard with it, which would leave the pad vibrating; run it under an init "
            + "(docker run --init, tini) for HD rumble"
    }

    /// Takes a USB DualSense out of the rumble emulation any earlier rumble report selected (ours in another
    /// session, the kernel's for another program, Steam's), so its voice coils play the sound card again: one
    /// output report with every valid flag clear, through its hidraw node. Without access to the node it is
    /// logged: the pad then plays its sound card only after it is plugged in again.
    private func restoreAudioHaptics(of device: EventDevice, logger: Logger) {
        guard let node = HidrawDevice.node(besideEvent: device.identity.sysPath) else { return }
        do throws(EventDeviceError) {
            let hidraw = try HidrawDevice(node: node, logger: logger)
            defer { hidraw.close() }
            try hidraw.write(DualSenseUSBReport.audioHaptics)
        } catch {
            logger.notice(
                "the pad may still be in rumble emulation: its audio haptics could not be selected",
                metadata: ["node": "\(node)", "error": "\(error)"])
        }
    }

    private func openAllGamepads(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        let devices: [InputDevice]
        do throws(DeviceDiscoveryError) {
            devices = try DeviceDiscovery(logger: logger).devices(probing: .noNode)
        } catch {
            throw OutputFailure(.other, "\(error)")
        }
        lastListing.withLock { $0 = devices }
        let candidates = selection.devicesToOpen(among: devices)
        // Only gamepads this process may not write: say so, as for one device.
        if candidates.isEmpty { throw selection.nothingToOpen(among: devices) }
        let members = candidates.compactMap { candidate -> EvdevOutput? in
            do throws(EventDeviceError) {
                // One plan for every pad: none is planned on frames of its own.
                return EvdevOutput(
                    device: try EventDevice(node: candidate.node, logger: logger), driver: candidate.driver,
                    clock: clock, logger: logger, followsFrames: false)
            } catch {
                logger.info(
                    "skipping a gamepad that cannot be opened",
                    metadata: ["node": "\(candidate.node)", "error": "\(error)"])
                return nil
            }
        }
        guard !members.isEmpty else {
            throw OutputFailure(.notFound, "none of the rumble-capable gamepads could be opened")
        }
        return BroadcastOutput(members: members, locality: locality)
    }

    /// The first of `nodes` that opens, tried in turn, with its driver and listed id; the first one's failure when
    /// none does.
    private func openFirst(of nodes: [NodeToOpen], logger: Logger) throws(OutputFailure) -> (
        device: EventDevice, driver: String?, id: StableDeviceID?
    ) {
        var firstFailure: OutputFailure?
        for (node, driver, id) in nodes {
            do throws(EventDeviceError) {
                let device = try EventDevice(node: node, logger: logger)
                // The node was listed (or announced) a moment ago: unplugged since, and taken by another device,
                // it holds one that was not chosen.
                if let id, !id.names(deviceWithID: device.id) {
                    device.close()
                    firstFailure =
                        firstFailure
                        ?? OutputFailure(.notFound, "\(node) now holds another device than \(id), which was chosen")
                    continue
                }
                return (device, driver, id)
            } catch {
                firstFailure = firstFailure ?? EvdevOutput.failure(from: error)
                if nodes.count > 1 {
                    logger.info(
                        "a rumble device could not be opened; trying the next",
                        metadata: ["node": "\(node)", "error": "\(error)"])
                }
            }
        }
        throw firstFailure ?? OutputFailure(.notFound, "no rumble-capable input device found")
    }

    /// A node to try: its path, the driver behind it (for the render profile), and the id the listing or hot-plug
    /// event it came from gave it (nil when none did).
    private typealias NodeToOpen = (node: String, driver: String?, id: StableDeviceID?)

    /// The nodes the engine tries to open, in turn until one opens (`DeviceSelection.devicesInTurn`): one for a
    /// device a hot-plug event named, a named node, or the device the engine is bound to.
    private func resolveNodes(logger: Logger) throws(OutputFailure) -> [NodeToOpen] {
        if let device = candidate.withLock({ $0 }) { return [(device.node, device.driver, device.id)] }
        let boundID = bound.withLock { $0 }
        if boundID == nil, case .node(let node) = selection {
            // A named node (maybe a by-id link): its driver, when udev can tell, only picks the render profile. The
            // listing it comes from is the hot-plug watch's snapshot too.
            let sysName = DeviceDiscovery.resolvedNode(node).split(separator: "/").last.map(String.init) ?? node
            let devices = try? DeviceDiscovery(logger: logger).devices(probing: .noNode)
            lastListing.withLock { $0 = devices }
            let listed = devices?.first { $0.identity.sysName == sysName }
            return [(node, listed?.driver, listed?.id)]
        }
        let devices: [InputDevice]
        do throws(DeviceDiscoveryError) {
            devices = try DeviceDiscovery(logger: logger).devices(probing: .noNode)
        } catch {
            throw OutputFailure(.other, "\(error)")
        }
        lastListing.withLock { $0 = devices }
        let chosen: [InputDevice]
        if let boundID {
            if let match = devices.first(where: { $0.id == boundID }) { return [(match.node, match.driver, match.id)] }
            if !adoptCompatibleDevice {
                throw OutputFailure(.notFound, "the device \("\(boundID)".quotedForMessage) is not connected")
            }
            chosen = devices.filter {
                selection.accepts($0, bound: boundID, adoptingCompatible: true, forceDevices: allowsForceDevices)
            }
        } else {
            chosen = preferringWhatWasAskedFor(
                selection.devicesInTurn(among: devices, forceDevices: allowsForceDevices))
        }
        guard !chosen.isEmpty else { throw selection.nothingToOpen(among: devices, forceDevices: allowsForceDevices) }
        return chosen.map { ($0.node, $0.driver, $0.id) }
    }

    /// The first device's candidates with the pads that have what the engine was asked for first, each group in
    /// its order: trigger motors for a trigger locality, HD actuators (voice coils, HD rumble) for `hd` or
    /// `automatic`; among those, the ones this process can drive first. Until 6 December the first gamepad listed
    /// was taken whatever it had, so with a DualSense listed before an Xbox Wireless Controller a trigger engine
    /// failed ("has no trigger motors"), and with the Xbox first an `hd` engine played its motors and left the
    /// DualSense's voice coils unused; and a pad whose hidraw node this user may not write was taken (playing its
    /// motors) before a later one whose actuators could play. A named device is taken as
    /// named.
    private func preferringWhatWasAskedFor(_ candidates: [InputDevice]) -> [InputDevice] {
        guard selection == .firstRumbleDevice else { return candidates }
        let wanted: Set<HDActuators.Kind>
        if locality.isTrigger {
            wanted = [.triggerMotors]
        } else if actuators != .rumble {
            wanted = [.voiceCoils, .hdRumble]
        } else {
            return candidates
        }
        return DeviceSelection.preferring(
            candidates, actuators: { HDActuators.find(identity: $0.identity) }, wanted: wanted)
    }

    /// Whether a device that appeared is ours (or, with the option, an acceptable replacement): the selection's
    /// rule (`DeviceSelection.accepts`), with a named node's links resolved now, when the device is there.
    private func accepts(_ device: InputDevice) -> Bool {
        selection.resolvingLinks().accepts(
            device, bound: bound.withLock { $0 }, adoptingCompatible: adoptCompatibleDevice,
            forceDevices: allowsForceDevices)
    }

    /// How long a hot-plug watch that ended on its own waits before it starts again, doubling while it keeps
    /// failing.
    static let watchRestartDelays = (first: Duration.seconds(1), longest: Duration.seconds(60))

    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? {
        let watch = MonitorWatch()
        let snapshot = lastListing.withLock { listing in
            defer { listing = nil }
            return listing
        }
        do throws(DeviceMonitorError) {
            let monitor = try DeviceMonitor(source: monitorSource, snapshot: snapshot, logger: logger)
            follow(monitor, in: watch, logger: logger, handler)
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
