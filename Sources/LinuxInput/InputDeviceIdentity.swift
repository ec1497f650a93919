// Who an input device is: the kernel's identity of an event node and the stable id derived from it.

/// The bus an input device sits on (`BUS_*` in linux/input.h).
public struct InputBus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let pci = InputBus(rawValue: 0x01)
    public static let usb = InputBus(rawValue: 0x03)
    public static let bluetooth = InputBus(rawValue: 0x05)
    public static let virtual = InputBus(rawValue: 0x06)
    public static let i8042 = InputBus(rawValue: 0x11)

    /// The kernel's names for the buses of linux/input.h, lower-cased without `BUS_`.
    private static let names: [UInt16: String] = [
        0x01: "pci", 0x02: "isapnp", 0x03: "usb", 0x04: "hil", 0x05: "bluetooth", 0x06: "virtual",
        0x10: "isa", 0x11: "i8042", 0x12: "xtkbd", 0x13: "rs232", 0x14: "gameport", 0x15: "parport",
        0x16: "amiga", 0x17: "adb", 0x18: "i2c", 0x19: "host", 0x1a: "gsc", 0x1b: "atari", 0x1c: "spi",
        0x1d: "rmi", 0x1e: "cec", 0x1f: "intel_ishtp", 0x20: "amd_sfh",
    ]

    /// `usb`, `bluetooth`, `virtual`...; a bus this table does not know is `bus0x42`.
    public var name: String {
        Self.names[rawValue] ?? "bus0x" + hex(rawValue, digits: 2)
    }

    public var description: String { name }
}

/// The identity of one event node, as the kernel reports it (`EVIOCGID`, `EVIOCGNAME`, `EVIOCGUNIQ`,
/// `EVIOCGPHYS`, or the same values from sysfs). The ioctls return name, `uniq` and `phys` as the driver
/// wrote them (a DragonRise pad's name ends in spaces) and sysfs reads strip surrounding white space:
/// `StableDeviceID` ignores it, so the id does not depend on which way a device was read.
public struct InputDeviceIdentity: Hashable, Sendable {
    /// The device's name (`EVIOCGNAME`), e.g. "Sony Interactive Entertainment DualSense Wireless Controller".
    public var name: String
    public var bus: InputBus
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16
    /// A unique identifier from the driver, typically a serial number or Bluetooth address; often empty.
    public var uniq: String
    /// The physical path the driver reports (`usb-0000:00:14.0-2/input0`); empty for most virtual devices.
    public var phys: String
    /// The kernel's name of the event node in sysfs (`event5`).
    public var sysName: String
    /// The device node (`/dev/input/event5`).
    public var node: String
    /// The event node's sysfs path (`/sys/devices/.../input/input12/event5`).
    public var sysPath: String

    public init(
        name: String, bus: InputBus, vendor: UInt16, product: UInt16, version: UInt16 = 0,
        uniq: String = "", phys: String = "", sysName: String = "", node: String = "", sysPath: String = ""
    ) {
        self.name = name
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
        self.uniq = uniq
        self.phys = phys
        self.sysName = sysName
        self.node = node
        self.sysPath = sysPath
    }

    /// The id that names this device across unplug and replug; see `StableDeviceID`.
    public var stableID: StableDeviceID { StableDeviceID(self) }
}

/// A short, printable id that stays the same when the same device is unplugged and plugged back, even
/// when it gets another `eventN`: `<bus>-<vendor>:<product>-<hash>`, e.g. `usb-054c:0ce6-3f2a9b1c`.
///
/// The hash is FNV-1a (32 bits, fixed seed, so it is the same in every process and on every machine) of
/// the device name and of `uniq`, or of `phys` when `uniq` is empty. The name is part of it because one
/// pad often exposes several event nodes that share bus, vendor, product, `uniq` and `phys` and differ
/// only in name (a DualSense has the pad, its motion sensors and its touchpad).
///
/// Two identical pads with neither `uniq` nor `phys` (some virtual devices) get the same base id; a
/// listing then suffixes the later ones in enumeration order (`-2`, `-3`; see `disambiguated(_:)`),
/// which is stable only as long as their order is.
public struct StableDeviceID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(_ identity: InputDeviceIdentity) {
        let uniq = identity.uniq.trimmingSurroundingWhitespace()
        let location = uniq.isEmpty ? identity.phys.trimmingSurroundingWhitespace() : uniq
        let name = identity.name.trimmingSurroundingWhitespace()
        // A NUL separates the two fields so that ("ab", "c") and ("a", "bc") hash differently.
        let digest = fnv1a32(Array(name.utf8) + [0] + Array(location.utf8))
        rawValue =
            "\(identity.bus.name)-\(hex(identity.vendor, digits: 4)):\(hex(identity.product, digits: 4))-"
            + hex(digest, digits: 8)
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether this id (from a listing or a hot-plug event) can name a device whose own id is `base`: it is
    /// `base`, or `base` with the suffix a listing gives the second and later of identical devices (`-2`, `-3`...).
    public func names(deviceWithID base: StableDeviceID) -> Bool {
        guard rawValue.hasPrefix(base.rawValue) else { return false }
        let suffix = rawValue.dropFirst(base.rawValue.count)
        guard !suffix.isEmpty else { return true }
        guard suffix.first == "-", let number = Int(suffix.dropFirst()) else { return false }
        return number >= 2 && suffix.dropFirst() == "\(number)"
    }

    /// The ids of `identities` in order, with `-2`, `-3`... appended to the second and later holders of an
    /// id already taken (identical devices with neither `uniq` nor `phys`).
    public static func disambiguated(_ identities: [InputDeviceIdentity]) -> [StableDeviceID] {
        var seen: [StableDeviceID: Int] = [:]
        return identities.map { identity in
            let base = identity.stableID
            let count = (seen[base] ?? 0) + 1
            seen[base] = count
            return count == 1 ? base : StableDeviceID(rawValue: "\(base.rawValue)-\(count)")
        }
    }
}

extension String {
    /// The string without leading and trailing white space (spaces, tabs, newlines).
    func trimmingSurroundingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

/// FNV-1a, 32 bits: tiny, deterministic, and good enough to tell devices apart in an id.
func fnv1a32(_ bytes: [UInt8]) -> UInt32 {
    // The FNV offset basis and prime for 32 bits (Fowler, Noll, Vo).
    let offsetBasis: UInt32 = 0x811c_9dc5
    let prime: UInt32 = 0x0100_0193
    var hash = offsetBasis
    for byte in bytes {
        hash ^= UInt32(byte)
        hash = hash &* prime
    }
    return hash
}

/// Lower-case hex, zero-padded to `digits`.
package func hex<T: BinaryInteger>(_ value: T, digits: Int) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
