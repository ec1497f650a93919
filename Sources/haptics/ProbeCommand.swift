import ArgumentParser
import LinuxAudio
import LinuxInput

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe one input device in depth: identity, force feedback, driver, access.",
        discussion: """
            Probing never grabs the device and never reads its input events: it opens the node \
            read-write (read-only when write is refused), asks the kernel, and closes it.
            """)

    @Argument(
        help: ArgumentHelp(
            DeviceSelector.inputDeviceHelp + " Default: the first rumble-capable device.", valueName: "device"))
    var device: DeviceSelector?

    @Flag(help: "Print a JSON object (schema in docs/devices.md).")
    var json = false

    @OptionGroup var logging: VerboseOption

    func run() throws {
        let listing = try DeviceListing(logger: logging.logger)
        let chosen = try device?.inputDevice(in: listing) ?? Self.firstRumbleDevice(in: listing)
        if json {
            print(try DeviceReportJSON.document(chosen))
            return
        }
        print(describe(chosen))
        guard chosen.access.isPermissionProblem else { return }
        if chosen.isGamepad || chosen.forceFeedback.isAvailable {
            print("\n" + AccessAdvice.eventNodes())
        } else {
            print(
                "\nThis is not a gamepad: the project's udev rule leaves it root-only on purpose (its events "
                    + "could reveal keystrokes; see docs/device-access.md). What is shown comes from sysfs.")
        }
    }

    static func firstRumbleDevice(in listing: DeviceListing) throws -> InputDevice {
        if let first = listing.rumbleCapable.first { return first }
        guard listing.all.isEmpty else {
            throw CommandFailure(
                "no rumble-capable device to probe", why: "none among \(listing.all.count) input device(s)",
                fix: "Name one (`haptics devices --all` lists them).")
        }
        throw CommandFailure(
            "no input device to probe", why: listing.noDevicesReason,
            fix: DeviceListing.noDevicesFix)
    }

    private func describe(_ device: InputDevice) -> String {
        let identity = device.identity
        let ff = device.forceFeedback
        func orNone(_ text: String) -> String { text.isEmpty ? "(none)" : text }
        func list(_ features: [ForceFeedbackFeature]) -> String {
            features.isEmpty ? "none" : features.map(\.name).joined(separator: ", ")
        }
        let gamepad =
            (device.isGamepad ? "yes" : "no")
            + (device.gamepadEvidence == .udev
                ? " (udev's ID_INPUT_JOYSTICK)" : " (judged from its keys and axes; no udev daemon data)")
        let slots =
            ff.maxEffects.map(String.init) ?? "unknown (node not opened)"
        var lines = [
            identity.name.isEmpty ? "(unnamed device)" : identity.name,
            "  id              \(device.id)",
            "  node            \(identity.node)",
            "  sysfs           \(identity.sysPath)",
            "  bus             \(identity.bus.name), vendor \(hex4(identity.vendor)), product \(hex4(identity.product)), "
                + "version \(hex4(identity.version))",
            "  uniq            \(orNone(identity.uniq))",
            "  phys            \(orNone(identity.phys))",
            "  driver          \(device.driver ?? "(none: virtual device or no parent driver)")",
            "  gamepad         \(gamepad)",
            "  access          \(device.access)",
        ]
        if ff.isAvailable {
            lines += [
                "  effects         \(list(ff.effects))",
                "  waveforms       \(list(ff.waveforms))",
                "  gain            \(ff.gain ? "yes" : "no")",
                "  autocenter      \(ff.autocenter ? "yes" : "no")",
                "  effect slots    \(slots)",
                // How an engine plays patterns on it.
                "  engine path     "
                    + (ff.runsWaveformsItself
                        ? "periodic effects the device runs (a force device: only with --allow-force-devices)"
                        : ff.isRumbleCapable ? "motor levels" : "none"),
            ]
        } else {
            lines.append("  force feedback  none")
        }
        if let coils = device.hdActuators, let card = coils.soundCardNumber, let holder = coils.soundCardHolder {
            lines.append("  voice coils     card \(card) is held by \(holder): \(Self.soundServerRoute(card: card))")
        }
        lines.append(
            "  capabilities    read from \(device.capabilitySource == .evdev ? "the open node (libevdev)" : "sysfs")")
        lines.append("")
        lines.append(device.summary)
        return lines.joined(separator: "\n")
    }

    /// How the engine reaches a card a program holds: the sound server's output on it, or why not.
    private static func soundServerRoute(card: Int) -> String {
        do throws(SoundServerRouteFailure) {
            let (server, sink) = try SoundServer.route(toCard: card, channels: 4)
            return "played through the output \(sink.name) of the sound server (\(server))"
        } catch {
            return "the engine plays on the motors: \(error)"
        }
    }

    private func hex4(_ value: UInt16) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
