// The library's constants and its answers to NULL.
import CLinuxHaptics
import LinuxHaptics
import LinuxHapticsC
import Testing

@Suite struct LibraryTests {
    @Test func theVersionIsTheHeaders() {
        #expect(String(cString: lh_version()) == LH_VERSION_STRING)
        #expect(LH_VERSION_STRING == "\(LH_VERSION_MAJOR).\(LH_VERSION_MINOR).\(LH_VERSION_PATCH)")
    }

    @Test(arguments: HapticEngineStoppedReason.allCases)
    func everyStoppedReasonHasItsSwiftName(_ reason: HapticEngineStoppedReason) {
        #expect(String(cString: lh_stopped_reason_name(reason.cValue)) == reason.rawValue)
    }

    @Test func stoppedReasonsHaveDistinctValuesAndAnUnknownOneIsNamedSo() {
        let values = Set(HapticEngineStoppedReason.allCases.map(\.cValue.rawValue))
        #expect(values.count == HapticEngineStoppedReason.allCases.count)
        #expect(String(cString: lh_stopped_reason_name(lh_stopped_reason(rawValue: 99))) == "unknown")
    }

    @Test func errorAccessorsAnswerNullWithoutCrashing() {
        #expect(lh_error_code(nil) == LH_ERROR_INVALID_ARGUMENT)
        #expect(String(cString: lh_error_message(nil)) == "")
        #expect(String(cString: lh_error_json_path(nil)) == "")
        lh_error_free(nil)
        lh_pattern_free(nil)
        lh_engine_destroy(nil)
        lh_string_free(nil)
        #expect(lh_pattern_duration(nil) == 0)
    }

    @Test func engineCallsOnNullAreInvalidArguments() {
        #expect(lh_engine_stop(nil) == LH_ERROR_INVALID_ARGUMENT)
        #expect(lh_engine_set_stopped_handler(nil, nil, nil) == LH_ERROR_INVALID_ARGUMENT)
        let (status, error) = calling { error in lh_engine_play_transient(nil, 1, 1, error) }
        #expect(status == LH_ERROR_INVALID_ARGUMENT && error?.message == "engine is NULL")
        var engine: OpaquePointer?
        let (empty, emptyError) = calling { error in lh_engine_create("", &engine, error) }
        #expect(empty == LH_ERROR_INVALID_ARGUMENT)
        #expect(emptyError?.message.hasPrefix("device is empty") == true)
        #expect(engine == nil)
        let (unknown, unknownError) = calling { error in
            lh_engine_create_with_actuators("event0", lh_actuators(rawValue: 7), &engine, error)
        }
        #expect(unknown == LH_ERROR_INVALID_ARGUMENT)
        #expect(unknownError?.message.hasPrefix("actuators 7 is not one of") == true)
        #expect(engine == nil)
        #expect(lh_engine_uses_voice_coils(nil) == 0)
        #expect(String(cString: lh_engine_actuators(nil)) == "rumble")
    }

    /// A negative actuators value (C's enum passed as -1) is named as the caller wrote it, not as 4294967295.
    @Test func aNegativeActuatorsValueIsNamedAsWritten() {
        var engine: OpaquePointer?
        let (status, error) = calling { error in
            lh_engine_create_with_actuators("event0", lh_actuators(rawValue: UInt32(bitPattern: -1)), &engine, error)
        }
        #expect(status == LH_ERROR_INVALID_ARGUMENT)
        #expect(error?.message.hasPrefix("actuators -1 is not one of") == true, "\(error?.message ?? "")")
        #expect(engine == nil)
    }

    /// A device or locality name that is not UTF-8 is refused as such (its odd bytes were replaced, and the engine
    /// looked for a device of that other name), as a pattern's path is.
    @Test func aDeviceOrLocalityNameThatIsNotUTF8IsAnInvalidArgument() {
        var engine: OpaquePointer?
        let bytes: [CChar] = [CChar(bitPattern: 0xff), CChar(bitPattern: 0xfe), 0]
        let (device, deviceError) = calling { error in lh_engine_create(bytes, &engine, error) }
        #expect(device == LH_ERROR_INVALID_ARGUMENT)
        #expect(deviceError?.message.hasPrefix("device is not UTF-8 text") == true, "\(deviceError?.message ?? "")")
        let (locality, localityError) = calling { error in
            lh_engine_create_with_locality("event0", LH_ACTUATORS_RUMBLE, bytes, &engine, error)
        }
        #expect(locality == LH_ERROR_INVALID_ARGUMENT)
        #expect(localityError?.message.hasPrefix("locality is not UTF-8 text") == true)
        #expect(engine == nil)
    }

    @Test func theToolsVirtualOutputIsAnInvalidArgumentThatSaysTheLibraryPlaysOnGamepadsOnly() {
        var engine: OpaquePointer?
        let (status, error) = calling { error in lh_engine_create("virtual", &engine, error) }
        #expect(status == LH_ERROR_INVALID_ARGUMENT)
        #expect(
            error?.message.hasPrefix(
                "device \"virtual\" is the haptics tool's built-in virtual output, which the C library does not have: "
                    + "it plays on gamepads only.") == true, "\(error?.message ?? "")")
        #expect(engine == nil)
    }

    /// A number is what `haptics --device` reads as an index into `haptics devices`, a list of that moment that the
    /// library does not keep: it is an invalid argument that says to pass a node or stable id. It was taken for a
    /// stable id, and answered that the device "0" was not connected, with a pad plugged in (until 7 December).
    @Test(arguments: ["0", "3", "-1"])
    func aNumberIsAnInvalidArgumentThatSaysIndexesAreTheTools(name: String) {
        var engine: OpaquePointer?
        let (status, error) = calling { error in lh_engine_create(name, &engine, error) }
        #expect(status == LH_ERROR_INVALID_ARGUMENT)
        #expect(
            error?.message.hasPrefix(
                "device \"\(name)\" is an index of `haptics devices`, which only the haptics tool reads") == true,
            "\(error?.message ?? "")")
        #expect(engine == nil)
    }

    /// A device or locality name holding characters that act on a terminal (an escape sequence, a carriage return,
    /// a bell) comes back escaped in the message (`\u001b`), the locality quoted: until 6 December they were copied
    /// into it raw, and a name could recolour or rewrite the caller's terminal or log.
    @Test func namesInMessagesHaveTheirHiddenCharactersEscaped() {
        var engine: OpaquePointer?
        let name = "pad\u{1b}[31mRED\r\u{07}"
        let (device, deviceError) = calling { error in lh_engine_create("/dev/" + name, &engine, error) }
        #expect(device != LH_OK && engine == nil)
        let (locality, localityError) = calling { error in
            lh_engine_create_with_locality("event0", LH_ACTUATORS_RUMBLE, name, &engine, error)
        }
        #expect(locality == LH_ERROR_INVALID_ARGUMENT && engine == nil)
        for message in [deviceError?.message ?? "", localityError?.message ?? ""] {
            #expect(!message.unicodeScalars.contains { $0 == "\u{1b}" || $0 == "\r" || $0 == "\u{07}" }, "\(message)")
            #expect(message.contains(#"pad\u001b[31mRED\"#), "\(message)")
        }
        #expect(localityError?.message.hasPrefix(#"locality "pad\u001b[31mRED\r\u0007" is not one of"#) == true)
    }

    /// A trigger locality on every gamepad is refused as the caller's mistake, whatever is plugged in (it was
    /// `LH_ERROR_DEVICE`, a pad's lack, until 6 December).
    @Test func aTriggerLocalityOnEveryGamepadIsAnInvalidArgument() {
        var engine: OpaquePointer?
        for locality in ["triggers", "left-trigger", "rightTrigger"] {
            let (status, error) = calling { error in
                lh_engine_create_with_locality("all", LH_ACTUATORS_RUMBLE, locality, &engine, error)
            }
            #expect(status == LH_ERROR_INVALID_ARGUMENT, "\(locality)")
            #expect(error?.message.contains("not on every gamepad") == true, "\(error?.message ?? "")")
            #expect(engine == nil)
        }
    }

    @Test func anUnknownLocalityIsAnInvalidArgumentThatListsTheNames() {
        var engine: OpaquePointer?
        let (status, error) = calling { error in
            lh_engine_create_with_locality("event0", LH_ACTUATORS_RUMBLE, "feet", &engine, error)
        }
        #expect(status == LH_ERROR_INVALID_ARGUMENT)
        #expect(error?.message.hasPrefix("locality \"feet\" is not one of") == true)
        #expect(error?.message.contains("left-trigger") == true)
        #expect(engine == nil)
    }

    @Test func theDeviceListIsAJSONArray() {
        var json: UnsafeMutablePointer<CChar>?
        let (status, error) = calling { error in lh_devices_json(&json, error) }
        defer { lh_string_free(json) }
        #expect(status == LH_OK, "\(error?.message ?? "")")
        #expect(json.map { String(cString: $0).hasPrefix("[") } == true)
    }
}
