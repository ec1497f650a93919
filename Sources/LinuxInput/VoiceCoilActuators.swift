// Which pads have voice coils that play waveforms (HD haptics), and how they are reached: the DualSense and
// DualSense Edge, over Bluetooth through report 0x32 on their hidraw node, over USB as channels 3 and 4 of the
// pad's own sound card (the ALSA card snd-usb-audio makes of its audio interfaces, under the same USB device as
// its HID interface).
internal import Glibc
import LinuxSystem

/// A pad's voice-coil actuators, and whether this process can drive them.
public struct VoiceCoilActuators: Sendable, Hashable {
    /// The hidraw node their waveform reports are written to (Bluetooth); nil over USB or when the pad has none.
    public var node: String?
    /// The ALSA device of the pad's sound card, whose channels 3 and 4 they are (USB): `plughw:N,0`, alsa-lib's
    /// plug layer over the card's own device, which turns our float samples into the card's 16-bit ones.
    public var soundCard: String?
    /// Whether this user may write `node`, or the sound card's playback device.
    public var writable: Bool
    /// Why they cannot be driven, when they cannot: no node or card, or no permission (naming the fix).
    public var unavailableReason: String?

    public init(node: String?, soundCard: String? = nil, writable: Bool, unavailableReason: String?) {
        self.node = node
        self.soundCard = soundCard
        self.writable = writable
        self.unavailableReason = unavailableReason
    }

    /// They can be driven now: a node or card this user may write.
    public var isDrivable: Bool { (node != nil || soundCard != nil) && writable }

    /// The vendor of the pads with voice coils, and their products (DualSense, DualSense Edge).
    static let sony: UInt16 = 0x054c
    static let dualSenseProducts: Set<UInt16> = [0x0ce6, 0x0df2]

    /// Whether a pad with `identity` has voice coils: a DualSense.
    public static func present(on identity: InputDeviceIdentity) -> Bool {
        identity.vendor == sony && dualSenseProducts.contains(identity.product)
    }

    /// The voice coils of the pad with `identity` (its event node's sysfs path leads to its HID device and
    /// hidraw node), or nil when it has none.
    public static func find(identity: InputDeviceIdentity) -> VoiceCoilActuators? {
        guard present(on: identity) else { return nil }
        guard identity.bus == .bluetooth else {
            guard let card = soundCard(besideEvent: identity.sysPath) else {
                return VoiceCoilActuators(
                    node: nil, writable: false,
                    unavailableReason:
                        "over USB the DualSense's voice coils are channels 3 and 4 of its sound card, and no sound "
                        + "card was found under its USB device (is snd-usb-audio loaded?)")
            }
            let pcm = "/dev/snd/pcmC\(card)D0p"
            let writable = Sys.access(pcm, W_OK)
            return VoiceCoilActuators(
                node: nil, soundCard: "plughw:\(card),0", writable: writable,
                unavailableReason: writable
                    ? nil : "\(pcm) may not be written by this user: log in at the seat, or join the audio group")
        }
        guard let node = HidrawDevice.node(besideEvent: identity.sysPath) else {
            return VoiceCoilActuators(
                node: nil, writable: false, unavailableReason: "\(identity.node) has no hidraw node beside it")
        }
        let writable = Sys.access(node, W_OK)
        return VoiceCoilActuators(
            node: node, writable: writable, unavailableReason: writable ? nil : notWritable(node))
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

    private static func parent(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }

    /// What to do when `node` may not be written.
    package static func notWritable(_ node: String) -> String {
        "\(node) may not be written by this user: install the udev rule (udev/70-haptics-gamepads.rules, "
            + "`sudo make install-udev`) and plug the pad in again"
    }
}
