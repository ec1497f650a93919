// A folder of named patterns (`Haptics/`), where it is looked for, and what a lookup by name or path found.
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import AHAPFiles
import LinuxSystem

/// Resolves names inside one folder.
public struct HapticResourceDirectory: HapticResourceResolving {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// `nil` for names that would leave the folder (separators, leading dots) and for files that do not exist: a
    /// folder named like the resource (`thud.ahap/`) is none (until 7 December it was taken for the pattern's
    /// file, and one named like a sound hid the engine's copy of it).
    public func url(forResource name: String, withExtension fileExtension: String) -> URL? {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else { return nil }
        let url = directory.appendingPathComponent(name).appendingPathExtension(fileExtension)
        return Self.isFile(url.path) ? url : nil
    }

    /// The name of the asset folder, in the repository and when installed.
    public static let folderName = "Haptics"
    /// Overrides every other location when set.
    public static let environmentVariable = "HAPTICS_DIR"

    /// The folders searched for `Haptics/`, in order (docs/app-haptics.md):
    /// 1. `$HAPTICS_DIR` when set, and then no other: a value that names no folder finds none, rather than a
    ///    folder the user did not mean;
    /// 2. `Haptics/` in the current directory (an app's working folder, the VM bench's /work);
    /// 3. installed next to the program, when it is in a `bin` folder: `<bin>/../share/haptics/Haptics`;
    /// 4. the system copies: `/usr/local/share/haptics/Haptics`, `/usr/share/haptics/Haptics`;
    /// 5. the repository: a `Haptics/` folder beside a `Package.swift`, looked for from the current directory
    ///    and from the program's folder upwards (`swift run`, `.build/debug/haptics`).
    public static func searchOrder(
        environment: [String: String], currentDirectory: String, executablePath: String?
    ) -> [URL] {
        var candidates: [URL] = []
        // As the system finds it: `link/..` is the folder of the link's target (a URL relative to the current folder
        // dropped it as text, and searched another folder than the one named).
        if let override = environment[environmentVariable], !override.isEmpty {
            return [DocumentFile.url(ofPath: override, from: currentDirectory)]
        }
        candidates.append(URL(fileURLWithPath: currentDirectory).appendingPathComponent(folderName))
        let executableDirectory = executablePath.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
        // Only for a program in a `bin` folder: any other folder's parent holds no installation of it (a program
        // in /tmp listed /share/haptics/Haptics, until 6 December).
        if let executableDirectory, executableDirectory.lastPathComponent == "bin" {
            candidates.append(
                executableDirectory.deletingLastPathComponent().appendingPathComponent("share/haptics")
                    .appendingPathComponent(folderName))
        }
        for prefix in systemPrefixes {
            candidates.append(URL(fileURLWithPath: prefix).appendingPathComponent(folderName))
        }
        for start in [URL(fileURLWithPath: currentDirectory)] + (executableDirectory.map { [$0] } ?? []) {
            candidates += ancestors(of: start).filter { isRepository($0) }.map {
                $0.appendingPathComponent(folderName)
            }
        }
        // A folder reached two ways (the current folder is the repository, or the program's) is listed once,
        // where it comes first.
        var seen: Set<String> = []
        return candidates.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }

    /// `$HAPTICS_DIR` as set, when it is set and names no folder (so nothing is found): for a message that
    /// says so.
    public static func brokenOverride(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) -> String? {
        guard let override = environment[environmentVariable], !override.isEmpty else { return nil }
        return isDirectory(DocumentFile.url(ofPath: override, from: currentDirectory)) ? nil : override
    }

    /// `/usr/local` before `/usr`, as PATH orders them.
    static let systemPrefixes = ["/usr/local/share/haptics", "/usr/share/haptics"]

    /// How far up from a starting folder the repository is looked for (`.build/<triple>/debug/` is 3 deep).
    static let maximumAncestorDepth = 6

    static func ancestors(of url: URL) -> [URL] {
        var folders: [URL] = []
        var folder = url.standardizedFileURL
        for _ in 0...maximumAncestorDepth {
            folders.append(folder)
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { break }
            folder = parent
        }
        return folders
    }

    /// Whether `url` is a folder, or a link to one, as the system finds its path (`stat` follows links; a path whose
    /// links were resolved as text took `link/..` for the folder the link is in).
    static func isDirectory(_ url: URL) -> Bool {
        (try? Sys.stat(url.path(percentEncoded: false)))?.isDirectory == true
    }

    /// Whether `path` is a regular file, or a link to one.
    static func isFile(_ path: String) -> Bool {
        (try? Sys.stat(path))?.isRegularFile == true
    }

    static func isRepository(_ folder: URL) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path)
    }

    /// The first folder of `searchOrder` that exists, for this process.
    public static func locate(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath,
        executablePath: String? = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    ) -> HapticResourceDirectory? {
        let found = searchOrder(
            environment: environment, currentDirectory: currentDirectory, executablePath: executablePath
        )
        .first(where: isDirectory)
        return found.map { HapticResourceDirectory(directory: $0) }
    }
}

/// What `HapticResourceDirectory.locateFile` found for a name or path given on a command line, and where it
/// looked, so that a caller can say both.
public struct HapticResourceLookup: Sendable {
    /// The file: the path as given when it exists, else the named resource in `folder`; `nil` when neither.
    public let file: URL?
    /// The first existing folder of the search order, where a name was looked up; `nil` when there is none.
    public let folder: HapticResourceDirectory?
    /// The search order's folders, in order.
    public let searched: [URL]
    /// The argument has a folder in it (`/tmp/tap.ahap`, `mine/tap.ahap`): a resource name never has one
    /// (`HapticResourceDirectory.url(forResource:withExtension:)`), so only that path was tried.
    public let isPath: Bool
}

extension HapticResourceDirectory {
    /// A resource as a person names it on a command line (`haptics play thud`): an argument with a folder in it
    /// is a path (relative to `currentDirectory`) whether it exists or not; a name ending in `.fileExtension`
    /// that is a file in `currentDirectory` is that file; anything else is a resource name, with or without
    /// `.fileExtension` (`thud`, `thud.ahap`), in the first existing folder of `searchOrder`, the folder
    /// `HapticManager.shared` and the cue sheet use too. A folder, or a file without the extension, of the same
    /// name in `currentDirectory` does not hide the resource (`mkdir thud` there, or a program called `thud`);
    /// such a file is taken only when there is no resource of its name.
    public static func locateFile(
        _ argument: String, withExtension fileExtension: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath,
        executablePath: String? = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    ) -> HapticResourceLookup {
        let searched = searchOrder(
            environment: environment, currentDirectory: currentDirectory, executablePath: executablePath)
        let folder = searched.first(where: isDirectory).map { HapticResourceDirectory(directory: $0) }
        // Relative to the current directory, so that messages name the file as it was typed; but a `..` is the
        // system's to resolve (after a symbolic link it is the target's parent), which a relative URL does as
        // text: `here/link/../p.ahap` played `here/p.ahap`, or nothing (until 7 December).
        let path =
            argument.split(separator: "/").contains("..")
            ? DocumentFile.url(ofPath: argument, from: currentDirectory)
            : URL(fileURLWithPath: argument, relativeTo: URL(fileURLWithPath: currentDirectory))
        let isPath = argument.contains("/")
        let isFile = FileManager.default.fileExists(atPath: path.path) && !isDirectory(path)
        if isPath || (isFile && argument.hasSuffix("." + fileExtension)) {
            return HapticResourceLookup(
                file: isPath && !FileManager.default.fileExists(atPath: path.path) ? nil : path, folder: folder,
                searched: searched, isPath: isPath)
        }
        let resource = folder?.url(
            forResource: resourceName(argument, withExtension: fileExtension), withExtension: fileExtension)
        return HapticResourceLookup(
            file: resource ?? (isFile ? path : nil), folder: folder, searched: searched, isPath: isPath)
    }

    /// The resource name a command-line argument stands for: `thud.ahap` and `thud` both name `thud`.
    public static func resourceName(_ argument: String, withExtension fileExtension: String) -> String {
        let suffix = "." + fileExtension
        return argument.hasSuffix(suffix) ? String(argument.dropLast(suffix.count)) : argument
    }
}
