// The values commands take, each parsed in one place: the device selector (one grammar for every command that
// names a device), the pattern a command plays or renders, the motor locality, the render profile, the monitor's
// event source and the emulated model.
// A conformance of a library's public type is public, so the modules it names are imported publicly here.
import AHAP
import AppHaptics
public import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HapticTestDevices
public import HapticRendering
import LinuxHaptics
public import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

/// A device as the user names it, the same way for `probe DEVICE` and for `--device` of `play`, `replay` and
/// `feedback`. The first form that fits wins:
///
/// | spelling | means |
/// | --- | --- |
/// | `virtual` | the built-in virtual output (the playing commands only) |
/// | `all` | every rumble-capable gamepad, driven with the same mix (the playing commands only) |
/// | an integer `N` | entry `#N` of `haptics devices` (its rumble-capable devices, in event-number order) |
/// | a path, `/dev/input/event5` or a `/dev/input/by-id/...` link | that event node |
/// | `event5` | `/dev/input/event5` |
/// | anything else, `usb-045e:028e-1a2b3c4d` | the device with that stable id (the same after a replug) |
enum DeviceSelector: ExpressibleByArgument, Hashable, Sendable {
    case virtual
    case allGamepads
    case index(Int)
    /// An event node, a link to one, or an event name (`event5`), as given.
    case node(String)
    case id(StableDeviceID)

    init?(argument: String) {
        if argument == "virtual" {
            self = .virtual
        } else if let index = DeviceSelection.index(naming: argument) {
            self = .index(index)
        } else {
            // The other spellings are the library's, shared with the C library's device names.
            switch DeviceSelection(naming: argument) {
            case .allGamepads?: self = .allGamepads
            case .node?: self = .node(argument)
            case .id(let id)?: self = .id(id)
            case .firstRumbleDevice?, nil: return nil
            }
        }
    }

    /// The selector spelled as the user may type it.
    var defaultValueDescription: String {
        switch self {
        case .virtual: "virtual"
        case .allGamepads: DeviceSelection.allGamepadsName
        case .index(let index): String(index)
        case .node(let node): node
        case .id(let id): id.rawValue
        }
    }

    /// The node's path: an event name is a node in /dev/input.
    private static func path(of node: String) -> String { DeviceSelection.nodePath(node) ?? node }

    /// The grammar in one sentence, for `--help`: what `probe` takes.
    static let inputDeviceHelp = """
        An event node (/dev/input/event5, or a /dev/input/by-id link), an event name (event5), a stable id from \
        `haptics devices`, or an index (#) from `haptics devices`.
        """

    /// The grammar in one sentence, for `--help`: what the playing commands take.
    static let outputHelp =
        inputDeviceHelp + " Also 'all' (every rumble-capable gamepad) or 'virtual' (the built-in virtual output)."

    /// The input device this selector names among `listing`'s; `virtual` and `all` name none.
    func inputDevice(in listing: DeviceListing) throws -> InputDevice {
        switch self {
        case .virtual, .allGamepads:
            throw CommandFailure(
                "no input device \"\(defaultValueDescription)\"",
                why: "'\(defaultValueDescription)' names an output of `play`, `replay` and `feedback`, not one device",
                fix: "`haptics devices --all` lists the input devices.")
        case .index(let index):
            guard listing.rumbleCapable.indices.contains(index) else {
                throw CommandFailure(
                    "no device #\(index)",
                    why: "`haptics devices` lists \(listing.rumbleCapable.count) rumble-capable device(s)",
                    fix: "Name one by its #, node or id from `haptics devices`.")
            }
            return listing.rumbleCapable[index]
        case .node(let node):
            // A path may be a udev symlink (/dev/input/by-id/..., /dev/input/by-path/...).
            let path = Self.path(of: node)
            let resolved = DeviceDiscovery.resolvedNode(path)
            return try listing.first(named: node) {
                $0.node == resolved || DeviceSelection.inputDirectory + $0.identity.sysName == path
            }
        case .id(let id):
            return try listing.first(named: id.rawValue) { $0.id == id }
        }
    }

    /// Where an engine plays for this selector. Only an index needs the device list, to learn its node.
    func outputSelection(logger: Logger) throws -> HapticOutputSelection {
        switch self {
        case .virtual: .virtual(VirtualOutput())
        case .allGamepads: .device(.allGamepads)
        case .index: .device(.node(try inputDevice(in: DeviceListing(logger: logger)).node))
        case .node(let node): .device(.node(Self.path(of: node)))
        case .id(let id): .device(.id(id))
        }
    }
}

extension DeviceListing {
    /// The first device that `matches`, or the failure that says `name` is not among them.
    fileprivate func first(named name: String, where matches: (InputDevice) -> Bool) throws -> InputDevice {
        guard let match = all.first(where: matches) else {
            guard !all.isEmpty else {
                throw CommandFailure(
                    "no input device \"\(name)\"", why: noDevicesReason, fix: DeviceListing.noDevicesFix)
            }
            throw CommandFailure(
                "no input device \"\(name)\"", fix: "`haptics devices --all` lists them; name one by its node or id.")
        }
        return match
    }
}

// The libraries do not depend on ArgumentParser, so the CLI adds the conformances.

extension HapticLocality: ExpressibleByArgument {
    public init?(argument: String) { self.init(named: argument) }

    static let help =
        "Where it plays: all, left (the strong, low-frequency motor only), right (the weak motor only), or on an "
        + "Xbox Wireless Controller over Bluetooth its trigger motors: left-trigger, right-trigger, triggers "
        + "(Core Haptics' names, leftTrigger..., are accepted too)."
}

extension HapticActuators: ExpressibleByArgument {
    static let help =
        "Which actuators play: rumble (the motors through the kernel, on every pad), hd (through the pad's hidraw "
        + "node: a DualSense's voice coils or a Switch controller's HD rumble, sharpness as the vibration's "
        + "frequency; other pads fall back to rumble with a note) or auto (hd where the pad has it and its node "
        + "may be written)."
}

extension RenderProfile: ExpressibleByArgument {
    public init?(argument: String) {
        guard let profile = Self.named(argument) else { return nil }
        self = profile
    }

    public var defaultValueDescription: String { name }

    public static var allValueStrings: [String] { builtIn.map(\.name) }

    public static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}

/// `monitor --source`.
extension DeviceMonitor.Source: ExpressibleByArgument {}

/// `emulate MODEL`: the emulated controllers by name (`dualsense`, `xbox360`, ...).
extension EmulatedModel: ExpressibleByArgument {}

/// A pattern as the user names it, the same way for `play` and `render`: the path of an AHAP file, or the NAME of
/// one in the Haptics/ folder the library finds (`thud` or `thud.ahap`; the top-level help lists where it looks).
enum PatternArgument {
    static let fileExtension = "ahap"

    /// What to do when loading the pattern file `path` failed with `error`: `validate` lists every problem a
    /// document has; a file that could not be read at all (a directory, a FIFO) says what to name instead itself.
    static func loadFix(for error: any Error, path: String) -> String? {
        if let rejected = error as? AHAPError, rejected.errors.allSatisfy({ $0.code == .unreadableFile }) {
            return nil
        }
        return "`haptics validate \(path)` lists every problem."
    }

    /// The pattern's file, or a failure that tells a missing path from a name its folder does not hold, for the
    /// command `command`.
    static func locate(_ pattern: String, command: String) throws -> URL {
        guard !pattern.isEmpty else {
            throw CommandFailure(
                "no pattern named", why: "the pattern argument is empty",
                fix: "Name a pattern of the Haptics/ folder (`haptics \(command) thud`) or the path of an .ahap file.")
        }
        let lookup = HapticResourceDirectory.locateFile(pattern, withExtension: fileExtension)
        if let file = lookup.file { return file }
        // Named in the messages below as it reads, or quoted with what it hides escaped (a line break too).
        let shown = pattern.shownInMessage
        if lookup.isPath {
            // Something other than nothing there (a folder on the way this process may not search, a name too
            // long) is said as the system says it.
            if let problem = Sys.unreachable(pattern), problem.errno != .noSuchFileOrDirectory {
                throw CommandFailure(
                    "cannot reach the pattern \(shown)", why: "\(problem.errno)",
                    fix: "Check the path and the permissions of the folders on it.")
            }
            throw CommandFailure(
                "cannot find the pattern \(shown)", why: "no file \(shown)",
                fix: "Check the path. A pattern of the Haptics/ folder is named without a folder: "
                    + "`haptics \(command) thud`.")
        }
        let name = HapticResourceDirectory.resourceName(pattern, withExtension: fileExtension)
        if let folder = lookup.folder {
            let file = folder.directory.appendingPathComponent("\(name).\(fileExtension)").path
            if let problem = Sys.unreachable(file), problem.errno != .noSuchFileOrDirectory {
                throw CommandFailure(
                    "cannot reach the pattern \(shown)", why: "\(file): \(problem.errno)",
                    fix: "Check the permissions of \(folder.directory.path), or set HAPTICS_DIR to a folder this "
                        + "user may read.")
            }
        }
        if lookup.folder == nil, let override = HapticResourceDirectory.brokenOverride() {
            throw CommandFailure(
                "cannot find the pattern \(shown)",
                why: "no file \(shown), and HAPTICS_DIR is set to \(override), which is not a folder",
                fix:
                    "Point HAPTICS_DIR at the folder that holds \(name.shownInMessage).ahap, or unset it to search ./Haptics, "
                    + "the installed copy and the repository.")
        }
        let why =
            lookup.folder.map {
                "no file \(shown), and no \(name.shownInMessage).\(fileExtension) in \($0.directory.path)"
            }
            ?? "no file \(shown), and no Haptics/ folder in: "
            + lookup.searched.map(\.standardizedFileURL.path).joined(separator: ", ")
        throw CommandFailure(
            "cannot find the pattern \(shown)", why: why,
            fix:
                "Pass the path of an .ahap file, or set HAPTICS_DIR to the folder that holds \(name.shownInMessage).ahap."
        )
    }
}

/// The file an option writes (`render --output`, `--record`, `emulate --haptics-wav`), refused before anything is
/// written when the kernel makes it up as it is read: a write there is an order to the kernel, not a file saved (as
/// root, `--output /proc/sys/vm/drop_caches` would hand it a rendered pattern). A path with no file yet, to be
/// created, passes.
enum OutputFile {
    static func check(_ path: String?, writtenBy option: String) throws {
        guard let path, let why = KernelMadeFiles.refusal(ofPath: path) else { return }
        throw ValidationError(
            "\(option) does not write to \(path.shownInMessage): \(why), and what is written to it goes to the "
                + "kernel; name a file of your own")
    }
}
