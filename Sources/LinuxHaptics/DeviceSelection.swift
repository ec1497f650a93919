// Which device an engine drives, and the one rule that answers every question about it: whether the manager
// has hardware, what the engine's first open takes, whether a device that appeared is the engine's, and which
// pads an all-gamepads engine drives. The caller lists the devices and resolves a named node's links once per
// question (`resolvingLinks`, which reads the file system); the rule itself only compares, and is unit-tested.
package import HapticRendering
public import LinuxInput

/// Which device an engine drives.
public enum DeviceSelection: Sendable, Hashable {
    /// The device with this stable id (as `haptics devices` prints it).
    case id(StableDeviceID)
    /// The device at this event node, `/dev/input/eventN`; afterwards tracked by its stable id.
    case node(String)
    /// The first rumble-capable device this process may write, gamepads first. An engine asked for HD actuators
    /// (`HapticActuators.hd`, `.automatic`) or a trigger locality takes first the pads that have them, those whose
    /// hidraw node it may write before those whose node it may not.
    case firstRumbleDevice
    /// Every rumble-capable gamepad this process may write, each driven with the same mix. Pads that go away
    /// are dropped; when the last one goes the engine stops with `gameControllerDisconnect` and the next gamepad to
    /// appear resets it. A pad plugged in while others play joins at the next start or reset.
    case allGamepads
}

extension DeviceSelection {
    /// A device as a person or a program names it (`haptics --device`, the C library's `lh_engine_create`):
    /// `all` for every rumble-capable gamepad, an event node or a link to one (`/dev/input/event5`,
    /// `/dev/input/by-id/...`), an event name (`event5`), or else a stable id (`usb-045e:028e-1a2b3c4d`). Nil for
    /// the empty string, which names nothing.
    public init?(naming name: String) {
        if name.isEmpty { return nil }
        if name == Self.allGamepadsName {
            self = .allGamepads
        } else if let path = Self.nodePath(name) {
            self = .node(path)
        } else {
            self = .id(StableDeviceID(rawValue: name))
        }
    }

    /// The name of `allGamepads`.
    package static let allGamepadsName = "all"

    /// The index `name` spells, when it is a whole number (`0`, `3`, `-1`): `haptics --device` reads it as entry #N
    /// of `haptics devices`, a list of one moment that only the tool keeps. A stable id is never a number, so
    /// `init(naming:)`'s callers ask this first, and the C library refuses such a name.
    package static func index(naming name: String) -> Int? { Int(name) }

    /// Why this selection cannot play at `locality`, whatever is plugged in: a trigger locality plays on one pad's
    /// trigger motors, not on every gamepad. Nil when it can.
    package func refusal(at locality: HapticLocality) -> String? {
        guard self == .allGamepads, locality.isTrigger else { return nil }
        return "locality \(locality.rawValue) plays on one pad's trigger motors, not on every gamepad"
    }

    /// The event node `name` spells: a path as it is, an event name (`event5`) in /dev/input; nil otherwise.
    package static func nodePath(_ name: String) -> String? {
        if name.hasPrefix("/") { return name }
        return name.hasPrefix(eventPrefix) ? inputDirectory + name : nil
    }

    /// Where the event nodes are, with its trailing slash.
    package static let inputDirectory = "/dev/input/"
    private static let eventPrefix = "event"
}

extension DeviceSelection {
    /// This selection with a named node's links resolved (`/dev/input/by-id/...` to `/dev/input/eventN`, by
    /// `resolve`): the rule compares nodes as the kernel names them, the way discovery and hot-plug events report
    /// them. A link that does not exist yet is kept as it is, and then names nothing.
    package func resolvingLinks(_ resolve: (String) -> String = DeviceDiscovery.resolvedNode) -> DeviceSelection {
        guard case .node(let node) = self else { return self }
        return .node(resolve(node))
    }

    /// Whether this selection names `device`, whatever it can do: its id, its node, or any device.
    package func names(_ device: InputDevice) -> Bool {
        switch self {
        case .id(let id): device.id == id
        case .node(let node): device.node == node
        case .firstRumbleDevice, .allGamepads: true
        }
    }

    /// Whether an engine can drive `device`: rumble force feedback that this process may write, or, with
    /// `forceDevices` (`HapticEngineOptions.allowsForceDevices`), the periodic effects of a wheel or joystick that
    /// runs them itself. Without it such a device is never driven: its force moves the controls.
    package static func canDrive(_ device: InputDevice, forceDevices: Bool = false) -> Bool {
        device.forceFeedback.isRumbleCapable && device.access.allowsForceFeedback
            && (forceDevices || !device.forceFeedback.runsWaveformsItself)
    }

    /// What an engine with this selection opens among `devices` (in discovery order): the named device when it
    /// can be driven; the first drivable gamepad with rumble, or else the first drivable device, for
    /// `firstRumbleDevice`; every drivable gamepad with rumble for `allGamepads` (a force device is one device,
    /// never a member of the broadcast). Empty when nothing fits.
    package func devicesToOpen(among devices: [InputDevice], forceDevices: Bool = false) -> [InputDevice] {
        let inTurn = devicesInTurn(among: devices, forceDevices: forceDevices)
        return self == .allGamepads ? inTurn : Array(inTurn.prefix(1))
    }

    /// The devices an engine with this selection tries to open among `devices`, in turn until one opens (every
    /// one, for `allGamepads`): the named device when it can be driven; for `firstRumbleDevice`, every drivable
    /// gamepad with rumble, then every other drivable device. A node listed as drivable can still fail to open
    /// (a pad being unplugged, a driver that refuses): the next one is then taken.
    package func devicesInTurn(among devices: [InputDevice], forceDevices: Bool = false) -> [InputDevice] {
        let drivable = devices.filter { names($0) && Self.canDrive($0, forceDevices: forceDevices) }
        func isPad(_ device: InputDevice) -> Bool { device.isGamepad && !device.forceFeedback.runsWaveformsItself }
        switch self {
        case .allGamepads: return drivable.filter(isPad)
        case .firstRumbleDevice: return Self.preferring(drivable, isPad)
        case .id, .node: return Array(drivable.prefix(1))
        }
    }

    /// `devices` with those `isPreferred` holds for first, each group in its order (a stable partition).
    package static func preferring(_ devices: [InputDevice], _ isPreferred: (InputDevice) -> Bool) -> [InputDevice] {
        let preferred = devices.filter(isPreferred)
        return preferred + devices.filter { device in !preferred.contains { $0.id == device.id } }
    }

    /// `candidates` with the pads whose HD actuators (`actuators`, nil for none) are of a `wanted` kind first:
    /// those this process can drive now, then those it cannot (the engine falls back to their motors and names
    /// the fix), then every other pad; each group in its order. So a pad whose hidraw node this user may not
    /// write is passed over for a later one with the same actuators that can be driven, yet still taken before a
    /// pad without them.
    package static func preferring(
        _ candidates: [InputDevice], actuators: (InputDevice) -> HDActuators?, wanted: Set<HDActuators.Kind>
    ) -> [InputDevice] {
        // Looked up once per pad (a walk of sysfs), then two stable partitions: the drivable ones to the front of
        // the pads with the actuators.
        var found: [StableDeviceID: HDActuators] = [:]
        for device in candidates {
            if let hd = actuators(device), wanted.contains(hd.kind) { found[device.id] = hd }
        }
        let withThem = preferring(candidates) { found[$0.id] != nil }
        return preferring(withThem) { found[$0.id]?.isDrivable == true }
    }

    /// Why a force device (`ForceFeedbackCapabilities.runsWaveformsItself`) called `name` is not driven.
    package static func forceDeviceNotAllowed(_ name: String) -> String {
        "\(name) is a force-feedback device (a wheel or joystick that plays periodic effects itself): its force "
            + "moves the controls, so it plays only when asked for (HapticEngineOptions.allowsForceDevices, haptics "
            + "--allow-force-devices)"
    }

    /// Why this selection finds nothing to open among `devices`: a device it would take but this process may not
    /// write (`permissionDenied`, naming it and why), else none there (`notFound`), saying so when the only
    /// devices it would take are force devices not allowed.
    package func nothingToOpen(among devices: [InputDevice], forceDevices: Bool = false) -> OutputFailure {
        let denied = devices.first { device in
            guard names(device), device.forceFeedback.isRumbleCapable, !device.access.allowsForceFeedback,
                forceDevices || !device.forceFeedback.runsWaveformsItself
            else { return false }
            return self != .allGamepads || device.isGamepad
        }
        if let denied { return OutputFailure(.permissionDenied, "\(denied.name) (\(denied.node)): \(denied.access)") }
        if !forceDevices, self != .allGamepads,
            let force = devices.first(where: { device in
                names(device) && device.forceFeedback.runsWaveformsItself && Self.canDrive(device, forceDevices: true)
            })
        {
            return OutputFailure(
                .notFound,
                "no rumble-capable input device found: "
                    + Self.forceDeviceNotAllowed(
                        "\(force.name) (\(force.node))"))
        }
        return OutputFailure(
            .notFound, self == .allGamepads ? "no rumble-capable gamepad found" : "no rumble-capable input device found"
        )
    }

    /// Whether a device that appeared belongs to an engine with this selection: the device it was bound to coming
    /// back (by id, on whatever node); before it was bound to one, a device its first open would take; and with
    /// `adoptingCompatible`, while its own device is gone, any drivable gamepad with rumble.
    package func accepts(
        _ device: InputDevice, bound: StableDeviceID?, adoptingCompatible: Bool, forceDevices: Bool = false
    ) -> Bool {
        if let bound, device.id == bound { return true }
        if self == .allGamepads || bound == nil {
            return !devicesToOpen(among: [device], forceDevices: forceDevices).isEmpty
        }
        return adoptingCompatible && device.isGamepad && !device.forceFeedback.runsWaveformsItself
            && Self.canDrive(device)
    }
}
