// Discovery: every input event node, found with libudev (which reads sysfs, so it works with or without
// a udev daemon), identified, and probed for capabilities and access.
public import Logging
@_spi(Internals) public import LinuxSystem

/// One input event node as discovery found it: who it is, what it can do, whether we may use it.
public struct InputDevice: Hashable, Sendable {
    /// The stable id (see `StableDeviceID`), disambiguated within one listing.
    public var id: StableDeviceID
    public var identity: InputDeviceIdentity
    public var capabilities: InputDeviceCapabilities
    public var access: DeviceAccess
    /// A gamepad or joystick: udev's `ID_INPUT_JOYSTICK` when a udev daemon has processed the device,
    /// otherwise judged from its keys and axes the same way (`gamepadEvidence` says which).
    public var isGamepad: Bool
    public var gamepadEvidence: GamepadEvidence
    /// Where the capability bits were read: the open node (libevdev), or sysfs when it could not be opened.
    public var capabilitySource: CapabilitySource
    /// The kernel driver bound to the device's parent (sysfs `device/driver`): `xpad`, `playstation`...;
    /// nil for virtual devices (uinput), which have no parent device.
    public var driver: String?
    /// The pad's actuators beyond two rumble levels (a DualSense's voice coils, a Switch controller's HD rumble,
    /// an Xbox pad's trigger motors over Bluetooth), on its rumble node: where they are reached and whether this
    /// user may; nil for every other device.
    public var hdActuators: HDActuators?
    /// Where a pattern may play on it (`HapticLocality` names): `all`, `left` and `right` on a rumble-capable
    /// device, and the localities its HD actuators add (an Xbox pad's triggers); `all` alone on a device that runs
    /// periodic effects itself, whose one force has no sides (the engine refuses any other locality there); none
    /// without rumble.
    public var localities: [String] {
        guard forceFeedback.isRumbleCapable else { return [] }
        if forceFeedback.runsWaveformsItself { return ["all"] }
        return ["all", "left", "right"] + (hdActuators?.addedLocalities ?? [])
    }

    public enum GamepadEvidence: String, Hashable, Sendable {
        /// udev's `ID_INPUT_JOYSTICK` property, set by a running udev daemon.
        case udev
        /// Judged here from the device's keys and axes, as udev's `input_id` builtin does.
        case judged
    }

    public enum CapabilitySource: String, Hashable, Sendable {
        /// Read from the open node with libevdev and `EVIOCGEFFECTS`.
        case evdev
        /// Read from sysfs; the number of effect slots is then unknown.
        case sysfs
    }

    public init(
        id: StableDeviceID, identity: InputDeviceIdentity, capabilities: InputDeviceCapabilities,
        access: DeviceAccess, isGamepad: Bool, gamepadEvidence: GamepadEvidence,
        capabilitySource: CapabilitySource, driver: String?, hdActuators: HDActuators? = nil
    ) {
        self.id = id
        self.identity = identity
        self.capabilities = capabilities
        self.access = access
        self.isGamepad = isGamepad
        self.gamepadEvidence = gamepadEvidence
        self.capabilitySource = capabilitySource
        self.driver = driver
        self.hdActuators = hdActuators
    }

    public var forceFeedback: ForceFeedbackCapabilities { capabilities.forceFeedback }
    public var node: String { identity.node }
    public var name: String { identity.name }
}

/// Why discovery could not run at all (a missing device is not an error: it is an empty list).
public struct DeviceDiscoveryError: Error, Equatable, Sendable, CustomStringConvertible {
    public let underlying: SystemCallError
    public var description: String { "listing input devices failed: \(underlying)" }
}

/// Lists and looks up input event nodes.
public struct DeviceDiscovery: Sendable {
    private let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    /// Whether a udev daemon (systemd-udevd, eudev) runs on this system.
    public static var udevDaemonIsRunning: Bool { Sys.exists(udevDaemonControlPath) }
    /// The udev daemon's control socket, whose presence says the daemon runs.
    public static var udevDaemonControlPath: String { LinuxInput.udevDaemonControlPath }

    /// Whether `/dev/input` exists; without it the system has no evdev device at all.
    public static var inputDirectoryExists: Bool { Sys.exists(DeviceDirectoryWatch.inputDirectory) }

    /// Which event nodes a listing opens to probe them.
    package enum Probing: Sendable {
        /// Every node: its bits through libevdev, its effect slots, its access as the open went.
        case everyNode
        /// Only the nodes whose force-feedback bits in sysfs are not empty. Every other node is described from
        /// sysfs (its bits, no effect slots) and `access(2)` (what this process may open it for), without being
        /// opened: closing an event node waits out an RCU grace period in evdev (11 to 23 ms a node in the
        /// kernel tests' guest), for nodes an engine never drives. Identities, and so the stable ids, are the same
        /// as with `everyNode`.
        case forceFeedbackNodes
        /// No node: every node is described from sysfs (its bits; its effect slots unknown, nil, where it has
        /// force feedback, and 0 elsewhere) and `access(2)`. That is all choosing a device needs
        /// (`DeviceSelection`): an engine then opens the node it chose, and reads its slots there, so that no node
        /// is opened twice, nor closed only to be opened again. Identities, and so the stable ids, are the same as
        /// with `everyNode`.
        case noNode
    }

    /// Every input event node (`/dev/input/eventN`), in event-number order, probed. An empty list when
    /// the system has none.
    public func devices() throws(DeviceDiscoveryError) -> [InputDevice] {
        try devices(probing: .everyNode)
    }

    /// Every input event node, in event-number order, probed as `probing` says.
    package func devices(probing: Probing) throws(DeviceDiscoveryError) -> [InputDevice] {
        let context: UdevContext
        let paths: [String]
        do throws(SystemCallError) {
            context = try UdevContext()
            paths = try context.syspaths(subsystem: "input")
        } catch {
            throw DeviceDiscoveryError(underlying: error)
        }
        let udevRuns = Self.udevDaemonIsRunning
        let devices = paths.compactMap { path -> InputDevice? in
            guard let device = context.device(syspath: path), device.sysName.hasPrefix(eventNodePrefix) else {
                return nil
            }
            return probe(device, udevDaemonRuns: udevRuns, probing: probing)
        }
        .sorted { eventNumber($0.identity.sysName) < eventNumber($1.identity.sysName) }
        let ids = StableDeviceID.disambiguated(devices.map(\.identity))
        return zip(devices, ids).map { device, id in
            var device = device
            device.id = id
            return device
        }
    }

    /// The device node a path names, with symbolic links resolved (`/dev/input/by-id/...-event-joystick`
    /// is `/dev/input/eventN`); the path itself when it does not resolve.
    public static func resolvedNode(_ path: String) -> String {
        (try? Sys.realPath(path)) ?? path
    }

    /// The event node `sysName` (`event5`), probed; nil when it does not exist.
    public func device(sysName: String) -> InputDevice? {
        guard let context = try? UdevContext() else { return nil }
        return device(sysName: sysName, in: context)
    }

    /// `settle`: the node was just announced by a source that hears no `bind` events (see `settleAfterAdd`).
    func device(sysName: String, in context: UdevContext, settle: Bool = false) -> InputDevice? {
        guard let device = context.device(subsystem: "input", sysName: sysName) else { return nil }
        return probe(device, udevDaemonRuns: Self.udevDaemonIsRunning, settle: settle)
    }

    /// Builds the description of one `eventN` device: identity and capability bits from sysfs (readable
    /// without permission), then, when the node opens, the kernel's own bits through libevdev and the
    /// effect slots through `EVIOCGEFFECTS`.
    func probe(_ device: UdevDevice, udevDaemonRuns: Bool, settle: Bool = false, probing: Probing = .everyNode)
        -> InputDevice?
    {
        // The identity and capability attributes live on the `inputN` parent of `eventN`.
        guard let input = device.parent(subsystem: "input") else {
            logger.debug("input device has no inputN parent", metadata: ["syspath": "\(device.syspath)"])
            return nil
        }
        let identity = self.identity(of: device, input: input)
        if settle { settleAfterAdd(input) }
        let sysfsBits = CapabilityBits(sysfsAttribute: input.attribute)
        let hasForceFeedback = !sysfsBits.forceFeedback.isEmpty
        let opened =
            probing == .noNode || (probing == .forceFeedbackNodes && !hasForceFeedback)
            ? (DeviceAccess.permitted(for: identity.node), sysfsBits, .sysfs, hasForceFeedback ? nil : 0)
            : readCapabilities(identity.node, sysfs: sysfsBits)
        let capabilities = InputDeviceCapabilities(bits: opened.bits, maxEffects: opened.maxEffects)
        let isGamepad: Bool
        let evidence: InputDevice.GamepadEvidence
        if udevDaemonRuns && device.isInitialized {
            isGamepad = device.property("ID_INPUT_JOYSTICK") == "1"
            evidence = .udev
        } else {
            isGamepad = capabilities.looksLikeJoystick
            evidence = .judged
        }
        return InputDevice(
            id: identity.stableID, identity: identity, capabilities: capabilities, access: opened.access,
            isGamepad: isGamepad, gamepadEvidence: evidence, capabilitySource: opened.source,
            driver: input.parent?.driver,
            hdActuators: capabilities.forceFeedback.isRumbleCapable ? HDActuators.find(identity: identity) : nil)
    }

    /// The identity attributes of `eventN`'s `inputN` parent.
    private func identity(of device: UdevDevice, input: UdevDevice) -> InputDeviceIdentity {
        let sysName = device.sysName
        return InputDeviceIdentity(
            name: input.attribute("name") ?? "",
            bus: InputBus(rawValue: hexAttribute(input, "id/bustype")),
            vendor: hexAttribute(input, "id/vendor"),
            product: hexAttribute(input, "id/product"),
            version: hexAttribute(input, "id/version"),
            uniq: input.attribute("uniq") ?? "",
            phys: input.attribute("phys") ?? "",
            sysName: sysName,
            node: device.node ?? "/dev/input/\(sysName)",
            sysPath: device.syspath)
    }

    /// What opening the node tells: how it may be opened, the kernel's own capability bits (else the sysfs
    /// ones), and the effect slots.
    private func readCapabilities(
        _ node: String, sysfs: CapabilityBits
    ) -> (access: DeviceAccess, bits: CapabilityBits, source: InputDevice.CapabilitySource, maxEffects: Int?) {
        let handle: ProbeHandle
        switch ProbeHandle.open(node) {
        case .success(let opened): handle = opened
        case .failure(let failure):
            logger.debug("event node not opened", metadata: ["node": "\(node)", "error": "\(failure.error)"])
            return (failure.access, sysfs, .sysfs, nil)
        }
        var bits = sysfs
        var source = InputDevice.CapabilitySource.sysfs
        do throws(SystemCallError) {
            bits = try EvdevSnapshot(fileDescriptor: handle.fileDescriptor).bits
            source = .evdev
        } catch {
            logger.info(
                "libevdev could not read the node; using sysfs", metadata: ["node": "\(node)", "error": "\(error)"])
        }
        // Only a device with force feedback has slots; elsewhere the ioctl reports 0 or fails.
        guard !bits.forceFeedback.isEmpty else { return (handle.access, bits, source, 0) }
        do throws(SystemCallError) {
            return (handle.access, bits, source, try handle.maxEffects())
        } catch {
            logger.info("EVIOCGEFFECTS failed", metadata: ["node": "\(node)", "error": "\(error)"])
            return (handle.access, bits, source, nil)
        }
    }

    /// How long a node that was just added is left alone before it is opened, when the source hears no
    /// `bind` events.
    static let settleNanoseconds: UInt64 = 100_000_000

    /// Lets a node that was just added settle when a driver made it (its parent is a HID device or a USB
    /// interface) and the source is inotify on `/dev/input`. Drivers register the input device inside their
    /// probe and some finish setting it up after that: 6.1's hid-microsoft marks `EV_FF` on the registered
    /// device before it allocates the force-feedback state, and an `EVIOCGEFFECTS` in between makes the kernel
    /// dereference NULL. The netlink sources wait for the parent's `bind` uevent instead (`BindGate`); inotify
    /// sees only the node, and no sysfs attribute says that a probe has returned (the `driver` link exists
    /// before it starts). So this narrows the window rather than closing it: a probe still running 100 ms
    /// after the node appeared (a loaded host preempting the probing worker) can still be met. uinput devices
    /// have no such parent and are not delayed.
    func settleAfterAdd(_ input: UdevDevice) {
        guard let subsystem = input.parent?.subsystem, subsystem == "hid" || subsystem == "usb" else { return }
        Sys.sleep(nanoseconds: Self.settleNanoseconds)
    }

    private func hexAttribute(_ device: UdevDevice, _ name: String) -> UInt16 {
        device.attribute(name).flatMap { UInt16($0, radix: 16) } ?? 0
    }
}

/// Event nodes are `eventN`; the input subsystem also holds `inputN`, `jsN` and `mouseN`.
let eventNodePrefix = "event"

/// N of `eventN`, for ordering `event10` after `event9`.
func eventNumber(_ sysName: String) -> Int {
    Int(sysName.dropFirst(eventNodePrefix.count)) ?? Int.max
}
