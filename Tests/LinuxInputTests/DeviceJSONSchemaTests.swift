import FoundationEssentials
import Testing
@testable import LinuxInput

/// Any JSON value, to check the exact shape of what the CLI prints.
private enum JSONValue: Decodable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
}

private func encoded(_ value: some Encodable) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(value))
}

@Suite struct DeviceJSONSchemaTests {
    static let pad: InputDevice = {
        let identity = InputDeviceIdentity(
            name: "Haptics Virtual Pad", bus: .virtual, vendor: 0x1234, product: 0x5678, version: 1,
            sysName: "event3", node: "/dev/input/event3", sysPath: "/sys/devices/virtual/input/input5/event3")
        var bits = CapabilityBits()
        bits.forceFeedback = EventCodeSet([0x50, 0x51, 0x5a, 0x60].map { UInt16($0) })
        return InputDevice(
            id: identity.stableID, identity: identity,
            capabilities: InputDeviceCapabilities(bits: bits, maxEffects: 16), access: .readWrite,
            isGamepad: true, gamepadEvidence: .judged, capabilitySource: .evdev, driver: nil)
    }()

    /// The keys docs/devices.md documents for `devices --json` and `probe --json`.
    static let deviceKeys: Set<String> = [
        "id", "node", "name", "bus", "vendor", "product", "version", "uniq", "phys", "sysName", "sysPath",
        "isGamepad", "gamepadEvidence", "access", "accessReason", "driver", "capabilitySource", "forceFeedback",
        "summary", "hdActuators", "localities",
    ]

    @Test func deviceObjectHasEveryDocumentedKeyAndNoOther() throws {
        let object = try #require(try encoded(Self.pad).object)
        #expect(Set(object.keys) == Self.deviceKeys)
        #expect(object["id"] == .string(Self.pad.id.rawValue))
        #expect(object["bus"] == .string("virtual"))
        #expect(object["vendor"] == .string("1234"))
        #expect(object["product"] == .string("5678"))
        #expect(object["version"] == .string("0001"))
        #expect(object["uniq"] == .string(""))
        #expect(object["isGamepad"] == .bool(true))
        #expect(object["access"] == .string("read-write"))
        #expect(object["accessReason"] == .null)
        #expect(object["driver"] == .null)
        #expect(object["gamepadEvidence"] == .string("judged"))
        #expect(object["capabilitySource"] == .string("evdev"))
    }

    @Test func forceFeedbackUsesTheKernelsNames() throws {
        let ff = try #require(try encoded(Self.pad).object?["forceFeedback"]?.object)
        #expect(Set(ff.keys) == ["effects", "waveforms", "gain", "autocenter", "maxEffects", "runsWaveformsItself"])
        #expect(ff["runsWaveformsItself"] == .bool(false))
        #expect(ff["effects"] == .array([.string("rumble"), .string("periodic")]))
        #expect(ff["waveforms"] == .array([.string("sine")]))
        #expect(ff["gain"] == .bool(true))
        #expect(ff["autocenter"] == .bool(false))
        #expect(ff["maxEffects"] == .number(16))
    }

    @Test func unknownSlotsAndDeniedAccessAreExplicit() throws {
        var denied = Self.pad
        denied.access = .denied(reason: "permission denied: open(/dev/input/event3): Permission denied (errno 13)")
        denied.capabilities.forceFeedback.maxEffects = nil
        let object = try #require(try encoded(denied).object)
        #expect(Set(object.keys) == Self.deviceKeys, "null values keep their keys")
        #expect(object["access"] == .string("denied"))
        #expect(object["accessReason"] == .string(denied.access.reason ?? ""))
        #expect(object["forceFeedback"]?.object?["maxEffects"] == .null)
        #expect(denied.access.isPermissionProblem)
    }

    @Test func aForceDeviceListsOnlyTheLocalityTheEngineTakesOnIt() throws {
        // A joystick that runs periodic effects itself (rumble, periodic and constant: hid-pidff's set): its one
        // force has no sides, and the engine refuses any locality but `all` on it.
        var joystick = Self.pad
        var bits = CapabilityBits()
        bits.forceFeedback = EventCodeSet([0x50, 0x51, 0x52, 0x5a, 0x60].map { UInt16($0) })
        joystick.capabilities = InputDeviceCapabilities(bits: bits, maxEffects: 40)
        #expect(joystick.forceFeedback.runsWaveformsItself)
        #expect(joystick.localities == ["all"])
        #expect(try encoded(joystick).object?["localities"] == .array([.string("all")]))
        #expect(Self.pad.localities == ["all", "left", "right"])
    }

    @Test func monitorLineHasEventIdNodeNameAndAccess() throws {
        let object = try #require(try encoded(DeviceEvent(kind: .removed, device: Self.pad)).object)
        #expect(Set(object.keys) == ["event", "id", "node", "name", "isGamepad", "access"])
        #expect(object["access"] == .string(Self.pad.access.name))
        #expect(object["event"] == .string("removed"))
        #expect(object["node"] == .string("/dev/input/event3"))
        #expect(object["name"] == .string("Haptics Virtual Pad"))
    }

    @Test func summaryTellsWhatTheDeviceCanDo() {
        #expect(
            Self.pad.summary
                == "Gamepad with rumble (a strong and a weak motor), 16 effect slots, periodic effects (sine); adjustable gain."
        )
        var memless = Self.pad
        memless.driver = "xpad"
        #expect(memless.summary.contains("periodic effects emulated by the kernel as rumble"))
        var readOnly = Self.pad
        readOnly.access = .readOnly(reason: "write refused")
        #expect(readOnly.summary.hasSuffix("Opened read-only: effects cannot be played."))
    }
}
