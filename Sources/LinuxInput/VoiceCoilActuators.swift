// Which pads have voice coils that play waveforms (HD haptics), and how they are reached: the DualSense and
// DualSense Edge, over Bluetooth through report 0x32 on their hidraw node. Over USB the same actuators are
// channels 3 and 4 of the pad's sound card, which nothing here drives yet.
internal import Glibc
import LinuxSystem

/// A pad's voice-coil actuators, and whether this process can drive them.
public struct VoiceCoilActuators: Sendable, Hashable {
    /// The hidraw node their waveform reports are written to; nil when they are not reached that way on this
    /// connection (USB) or the pad has no hidraw node.
    public var node: String?
    /// Whether this user may write `node`.
    public var writable: Bool
    /// Why they cannot be driven, when they cannot: the connection, no node, or no permission (naming the fix).
    public var unavailableReason: String?

    public init(node: String?, writable: Bool, unavailableReason: String?) {
        self.node = node
        self.writable = writable
        self.unavailableReason = unavailableReason
    }

    /// They can be driven now: a node this user may write.
    public var isDrivable: Bool { node != nil && writable }

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
            return VoiceCoilActuators(
                node: nil, writable: false,
                unavailableReason:
                    "over USB the DualSense's voice coils are channels 3 and 4 of its sound card, which are not "
                    + "driven yet; over Bluetooth they are")
        }
        guard let node = HidrawDevice.node(besideEvent: identity.sysPath) else {
            return VoiceCoilActuators(
                node: nil, writable: false, unavailableReason: "\(identity.node) has no hidraw node beside it")
        }
        let writable = Sys.access(node, W_OK)
        return VoiceCoilActuators(
            node: node, writable: writable, unavailableReason: writable ? nil : notWritable(node))
    }

    /// What to do when `node` may not be written.
    package static func notWritable(_ node: String) -> String {
        "\(node) may not be written by this user: install the udev rule (udev/70-haptics-gamepads.rules, "
            + "`sudo make install-udev`) and plug the pad in again"
    }
}
