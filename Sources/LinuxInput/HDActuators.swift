// Which pads have actuators beyond the two rumble levels the kernel drives (HD haptics), and how they are
// reached while the kernel driver stays bound:
// - the DualSense and DualSense Edge: voice coils that play waveforms, over Bluetooth through report 0x32 on
//   their hidraw node, over USB as channels 3 and 4 of the pad's own sound card (the ALSA card snd-usb-audio
//   makes of its audio interfaces, under the same USB device as its HID interface);
// - the Switch Pro Controller and Joy-Cons on hid-nintendo: linear resonant actuators that take a frequency
//   and an amplitude in each of two bands (HD rumble), through output report 0x10 on their hidraw node;
// - the Xbox Wireless Controller over Bluetooth on hid-microsoft: two trigger motors beside the two body motors,
//   through output report 3 on its hidraw node. Over USB (xpad) it has no hidraw node, so none.
internal import Glibc
@_spi(Internals) import LinuxSystem

/// A pad's actuators beyond two rumble levels, and whether this process can drive them.
public struct HDActuators: Sendable, Hashable {
    /// What the actuators are.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A DualSense's two voice coils: waveforms (`--actuators hd`).
        case voiceCoils = "voice-coils"
        /// A Switch controller's HD rumble: two bands, each a frequency and an amplitude, per actuator
        /// (`--actuators hd`).
        case hdRumble = "hd-rumble"
        /// An Xbox Wireless Controller's two trigger motors (localities `left-trigger`, `right-trigger`,
        /// `triggers`).
        case triggerMotors = "trigger-motors"

        /// How a device summary names them.
        public var summary: String {
            switch self {
            case .voiceCoils: "Voice coils (HD haptics)"
            case .hdRumble: "HD rumble (a frequency and an amplitude in two bands per actuator)"
            case .triggerMotors: "Trigger motors (left-trigger, right-trigger, triggers)"
            }
        }

        /// The localities they add to the motors' `all`, `left` and `right`.
        public var addedLocalities: [String] {
            self == .triggerMotors ? ["left-trigger", "right-trigger", "triggers"] : []
        }
    }

    public var kind: Kind
    /// The hidraw node their waveform reports are written to (Bluetooth); nil over USB or when the pad has none.
    public var node: String?
    /// The ALSA number of the pad's sound card, whose channels 3 and 4 they are (USB).
    public var soundCardNumber: Int?
    /// That card's ALSA device: `plughw:N,0`, alsa-lib's plug layer over the card's own device, which turns our
    /// float samples into the card's 16-bit ones.
    public var soundCard: String? { soundCardNumber.map { "plughw:\($0),0" } }
    /// The process that holds the card's playback when no substream of it is free (a sound server, usually):
    /// its device is then busy, and the engine goes through the server's output on the card.
    public var soundCardHolder: SoundCardHolder?
    /// Whether this user may write `node`, or the sound card's playback device.
    public var writable: Bool
    /// Why they cannot be driven, when they cannot: no node or card, or no permission (naming the fix).
    public var unavailableReason: String?

    public init(
        kind: Kind = .voiceCoils, node: String?, soundCardNumber: Int? = nil, writable: Bool,
        unavailableReason: String?
    ) {
        self.kind = kind
        self.node = node
        self.soundCardNumber = soundCardNumber
        self.writable = writable
        self.unavailableReason = unavailableReason
    }

    /// The localities these actuators add to the motors' `all`, `left` and `right`: the trigger motors' three;
    /// none for actuators that play the same places as the motors.
    public var addedLocalities: [String] { kind.addedLocalities }

    /// They can be driven now: a node or card this user may write.
    public var isDrivable: Bool { (node != nil || soundCard != nil) && writable }

    /// The vendor of the pads with voice coils, and their products (DualSense, DualSense Edge).
    static let sony: UInt16 = 0x054c
    static let dualSenseProducts: Set<UInt16> = [0x0ce6, 0x0df2]
    /// Nintendo, and its controllers with HD rumble that hid-nintendo binds: Joy-Con (L), Joy-Con (R), Pro
    /// Controller, and the charging grip holding Joy-Cons.
    static let nintendo: UInt16 = 0x057e
    static let switchProducts: Set<UInt16> = [0x2006, 0x2007, 0x2009, 0x200e]
    /// Microsoft, and the Xbox controllers hid-microsoft drives over Bluetooth (rumble through report 3): Xbox
    /// One S (two firmwares), Elite Series 2 (two firmwares), Xbox Wireless Controller.
    static let microsoft: UInt16 = 0x045e
    static let xboxBluetoothProducts: Set<UInt16> = [0x02fd, 0x0b20, 0x0b05, 0x0b22, 0x0b13]

    /// Which Joy-Con a pad is: each has one actuator, and reads its own side of a rumble frame (the left Joy-Con the
    /// first four bytes), where the Pro Controller has two.
    public enum JoyConSide: Sendable, Hashable {
        case left, right
    }

    /// The side of the Joy-Con the pad with `identity` is, nil for any other pad: a lone Joy-Con by its product id,
    /// one in the charging grip (whose two Joy-Cons hid-nintendo binds as two pads of the grip's product id) by the
    /// name the driver gives it ("Nintendo Switch Left Joy-Con (Grip)").
    public static func joyConSide(_ identity: InputDeviceIdentity) -> JoyConSide? {
        guard identity.vendor == nintendo else { return nil }
        switch identity.product {
        case 0x2006: return .left
        case 0x2007: return .right
        case 0x200e where identity.name.contains("Left Joy-Con"): return .left
        case 0x200e where identity.name.contains("Right Joy-Con"): return .right
        default: return nil
        }
    }

    /// Whether the pad with `identity` is a Joy-Con, alone or in the grip, whose HD rumble has one actuator where
    /// the Pro Controller has two.
    public static func hasOneActuator(_ identity: InputDeviceIdentity) -> Bool { joyConSide(identity) != nil }

    /// What the pad with `identity` has beyond two rumble levels, if anything.
    public static func kind(of identity: InputDeviceIdentity) -> Kind? {
        switch identity.vendor {
        case sony where dualSenseProducts.contains(identity.product): .voiceCoils
        case nintendo where switchProducts.contains(identity.product): .hdRumble
        case microsoft where identity.bus == .bluetooth && xboxBluetoothProducts.contains(identity.product):
            .triggerMotors
        default: nil
        }
    }

    /// The actuators of the pad with `identity` beyond its rumble (its event node's sysfs path leads to its HID
    /// device and hidraw node), or nil when it has none.
    public static func find(identity: InputDeviceIdentity) -> HDActuators? {
        guard let kind = kind(of: identity) else { return nil }
        guard kind != .voiceCoils || identity.bus == .bluetooth else {
            guard let card = soundCard(besideEvent: identity.sysPath) else {
                return HDActuators(
                    node: nil, writable: false,
                    unavailableReason:
                        "over USB the DualSense's voice coils are channels 3 and 4 of its sound card, and no sound "
                        + "card was found under its USB device (is snd-usb-audio loaded?)")
            }
            let pcm = "/dev/snd/pcmC\(card)D0p"
            let writable = Sys.access(pcm, W_OK)
            var actuators = HDActuators(
                node: nil, soundCardNumber: card, writable: writable,
                unavailableReason: writable
                    ? nil : "\(pcm) may not be written by this user: log in at the seat, or join the audio group")
            actuators.soundCardHolder = soundCardHolder(card: card)
            return actuators
        }
        guard let node = HidrawDevice.node(besideEvent: identity.sysPath) else {
            return HDActuators(
                kind: kind, node: nil, writable: false,
                unavailableReason: "\(identity.node) has no hidraw node beside it")
        }
        let writable = Sys.access(node, W_OK)
        return HDActuators(
            kind: kind, node: node, writable: writable,
            unavailableReason: writable ? nil : AccessAdvice.hidrawNode(node))
    }

    /// The number of the sound card under the same USB device as the event node at `sysPath`: the event node's
    /// HID device sits in one of the pad's USB interfaces; the card snd-usb-audio made of its audio interfaces
    /// appears as `sound/cardN` in another interface of the same device. Nil when there is none.
    public static func soundCard(besideEvent sysPath: String) -> Int? {
        guard let hid = HidrawDevice.hidDevice(ofEvent: sysPath) else { return nil }
        // The interface holding the HID device, then the USB device holding the interface.
        let usbDevice = parent(of: parent(of: hid))
        guard Sys.exists(usbDevice + "/idVendor"), let entries = try? Sys.directoryEntries(usbDevice) else {
            return nil
        }
        let prefix = String(usbDevice.split(separator: "/").last ?? "") + ":"
        for entry in entries.sorted() where entry.hasPrefix(prefix) {
            guard let cards = try? Sys.directoryEntries(usbDevice + "/" + entry + "/sound") else { continue }
            if let card = cards.sorted().compactMap({ $0.hasPrefix("card") ? Int($0.dropFirst(4)) : nil }).first {
                return card
            }
        }
        return nil
    }

    /// The process holding sound card `card`'s playback device 0, read from the kernel's status of each of its
    /// substreams under `proc` ("closed", or the state with an `owner_pid` line): nil when one is free.
    public static func soundCardHolder(card: Int, proc: String = "/proc") -> SoundCardHolder? {
        let folder = "\(proc)/asound/card\(card)/pcm0p"
        guard let substreams = try? Sys.directoryEntries(folder).filter({ $0.hasPrefix("sub") }).sorted(),
            !substreams.isEmpty
        else { return nil }
        var holder: SoundCardHolder?
        for substream in substreams {
            guard let status = try? Sys.readSmallFile("\(folder)/\(substream)/status") else { return nil }
            guard !status.hasPrefix("closed") else { return nil }
            let owner = status.split(separator: "\n").first { $0.hasPrefix("owner_pid") }
            let digits = owner?.split(separator: ":").last?.filter { $0 != " " && $0 != "\t" }
            guard let pid = digits.flatMap({ Int32($0) }) else { continue }
            let command = (try? Sys.readSmallFile("\(proc)/\(pid)/comm"))?.split(separator: "\n").first.map(String.init)
            holder = holder ?? SoundCardHolder(pid: pid, command: command)
        }
        return holder
    }

    private static func parent(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }
}

/// A process that holds a sound card's playback: its id, and its command name when it could be read.
public struct SoundCardHolder: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var command: String?

    public init(pid: Int32, command: String?) {
        self.pid = pid
        self.command = command
    }

    public var description: String { command.map { "\($0) (pid \(pid))" } ?? "pid \(pid)" }
}
