// The user's haptics on/off switch, persisted across runs in
// $XDG_CONFIG_HOME/haptics/settings.json (fallback ~/.config/haptics/settings.json).
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import AHAP
import AHAPFiles
import LinuxInput
public import Logging
@_spi(Internals) import LinuxSystem
import Synchronization

/// What the settings file holds.
public struct FeedbackSettings: Sendable, Hashable, Codable {
    /// Whether haptics play at all.
    public var hapticsEnabled: Bool

    public init(hapticsEnabled: Bool = true) {
        self.hapticsEnabled = hapticsEnabled
    }

    /// Haptics on: what a user who never touched the switch gets.
    public static let defaults = FeedbackSettings()

    private enum CodingKeys: String, CodingKey {
        case hapticsEnabled
    }

    /// A setting the file does not name keeps its default (a file `{}` is the defaults, as is one written by a
    /// version that had other settings); one it names with a value of the wrong type makes the file corrupt.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hapticsEnabled =
            try container.decodeIfPresent(Bool.self, forKey: .hapticsEnabled) ?? Self.defaults.hapticsEnabled
    }

    /// Reads the settings file's text (JSON).
    package init(fileData: Data) throws {
        self = try JSONDecoder().decode(Self.self, from: fileData)
    }

    /// The settings file's text: pretty-printed with sorted keys, so a hand-edited file diffs cleanly.
    package func fileData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}

/// Reads the settings once, keeps them in memory, and writes every change through to the file atomically
/// (a temporary file in the same folder, then a rename over the old one), so a crash mid-write leaves either
/// the old file or the new one, never half of one. Thread-safe.
public final class FeedbackSettingsStore: Sendable {
    /// The settings file; nil when the environment gives no folder of the user's for it, and the switch then
    /// holds for the run only.
    public let fileURL: URL?
    private let current: Lock<FeedbackSettings>
    /// Held by a change from its start to its file write, so that two changes from two threads reach the file in
    /// the order they were made; `current` is held only to read or set the value.
    private let changing = Lock(())
    /// The thread running a change (`ServiceThread.currentID`), 0 when none: a change asked for from inside
    /// another is refused rather than locking `changing` again.
    private let changer = Atomic<UInt>(0)
    private let logger: Logger

    /// The settings file under the XDG base directory rules: `$XDG_CONFIG_HOME/haptics/settings.json` when
    /// `XDG_CONFIG_HOME` is set to an absolute path, else `$HOME/.config/haptics/settings.json`; `nil` when
    /// neither variable gives a usable folder.
    public static func defaultFileURL(environment: [String: String]) -> URL? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appendingPathComponent(relativePath)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home).appendingPathComponent(".config").appendingPathComponent(relativePath)
        }
        return nil
    }

    /// `haptics/settings.json` inside the config folder.
    public static let relativePath = "haptics/settings.json"

    /// Loads `fileURL`: a missing file means defaults (silently: the user never changed anything); an
    /// unreadable or corrupt one means defaults with an info log, and is replaced on the next change.
    public convenience init(fileURL: URL, logger: Logger) {
        self.init(file: fileURL, logger: logger)
    }

    /// The store at the default location for this process's environment (`defaultFileURL(environment:)`); with
    /// neither variable set, `.config/haptics/settings.json` in the home folder the user's account names. With
    /// none of these the switch holds for the run only, and is logged once: no folder that other users can
    /// write to (`/tmp`) is used, where one of them could plant the setting or a link in its place.
    public convenience init(environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger) {
        self.init(file: Self.fileURL(environment: environment, accountHome: Self.accountHome()), logger: logger)
    }

    init(file: URL?, logger: Logger) {
        self.fileURL = file
        self.logger = logger
        self.current = Lock(file.map { Self.load($0, logger: logger) } ?? .defaults)
        if file == nil {
            logger.info(
                """
                no folder for the haptics settings (no XDG_CONFIG_HOME, HOME or home folder of the account): \
                the haptics switch holds for this run only
                """)
        }
    }

    /// `defaultFileURL(environment:)`, else `.config/haptics/settings.json` in `accountHome` when it is an
    /// absolute path other than `/`.
    static func fileURL(environment: [String: String], accountHome: String?) -> URL? {
        if let url = defaultFileURL(environment: environment) { return url }
        guard let accountHome, accountHome.hasPrefix("/"), accountHome != "/" else { return nil }
        return URL(fileURLWithPath: accountHome).appendingPathComponent(".config").appendingPathComponent(
            relativePath)
    }

    /// The home folder of this process's account, from the password database; nil when it has none.
    static func accountHome() -> String? {
        let name = ProcessInfo.processInfo.userName
        guard !name.isEmpty else { return nil }
        return FileManager.default.homeDirectory(forUser: name)?.path
    }

    public var settings: FeedbackSettings { current.withLock { $0 } }

    public var hapticsEnabled: Bool {
        get { settings.hapticsEnabled }
        set { update { $0.hapticsEnabled = newValue } }
    }

    /// Changes the settings and writes them. A write failure is logged and the in-memory value still
    /// changes: the switch works for this run even on a read-only home. `change` may read the store (it runs on a
    /// copy, with no lock of the value held); a change asked for from inside it (`update`, or setting
    /// `hapticsEnabled`) is logged as an error and changes nothing: make it part of the outer change. (Until
    /// 6 December reading the store there trapped.)
    public func update(_ change: (inout FeedbackSettings) -> Void) {
        let thread = ServiceThread.currentID
        guard changer.load(ordering: .acquiring) != thread else {
            logger.error(
                "haptics settings not changed: a change was asked for from inside another; make it part of that one")
            return
        }
        let failure: (any Error)? = changing.withLock { _ in
            changer.store(thread, ordering: .releasing)
            defer { changer.store(0, ordering: .releasing) }
            var settings = current.withLock { $0 }
            change(&settings)
            current.withLock { $0 = settings }
            guard let fileURL else { return nil }
            do {
                try FileManager.default.createDirectory(
                    at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
                // `.atomic` writes a temporary file next to the target and renames it into place.
                try settings.fileData().write(to: fileURL, options: .atomic)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            logger.info(
                "haptics settings not saved; the change holds for this run only",
                metadata: ["file": "\(fileURL?.path ?? "")", "error": "\(failure)"])
        }
    }

    /// The most a settings file is read: a few lines of JSON, far more than they take.
    static let maximumFileBytes = 1 << 20

    private static func load(_ url: URL, logger: Logger) -> FeedbackSettings {
        guard FileManager.default.fileExists(atPath: url.path) else { return .defaults }
        do {
            // A regular file only, within the limit, as for the AHAP files.
            return try FeedbackSettings(
                fileData: Data(DocumentFile.read(url, maximumBytes: maximumFileBytes).get()))
        } catch {
            logger.info(
                "haptics settings file unreadable or corrupt; using defaults",
                metadata: ["file": "\(url.path)", "error": "\(error)"])
            return .defaults
        }
    }
}
