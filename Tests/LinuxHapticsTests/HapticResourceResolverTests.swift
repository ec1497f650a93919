// The default search order for Haptics/ and the resolver's refusal to leave its folder.
import Foundation
import LinuxHaptics
import AppHaptics
import Testing

@Suite struct HapticResourceResolverTests {
    @Test func resolvesExistingPatternsOnly() {
        let resolver = HapticResourceDirectory(directory: AppAssets.folder)
        #expect(resolver.url(forResource: "thud", withExtension: "ahap")?.lastPathComponent == "thud.ahap")
        #expect(resolver.url(forResource: "nope", withExtension: "ahap") == nil)
        for name in ["../Package", "", ".hidden", "a/b"] {
            #expect(resolver.url(forResource: name, withExtension: "ahap") == nil, "\(name)")
        }
    }

    @Test func searchOrderOverrideAloneElseWorkingFolderThenInstalledBesideBinThenSystemThenRepository() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("// swift-tools-version: 6.0\n", to: "repo/Package.swift")
        let binary = scratch.url.appendingPathComponent("repo/.build/x86_64-unknown-linux-gnu/debug/haptics").path
        let overridden = HapticResourceDirectory.searchOrder(
            environment: ["HAPTICS_DIR": "/opt/app/Haptics"], currentDirectory: "/",
            executablePath: binary
        ).map(\.path)
        #expect(overridden == ["/opt/app/Haptics"])
        let order = HapticResourceDirectory.searchOrder(
            environment: [:], currentDirectory: "/", executablePath: binary
        ).map(\.path)
        #expect(
            order == [
                "/Haptics",
                "/usr/local/share/haptics/Haptics",
                "/usr/share/haptics/Haptics",
                scratch.url.path + "/repo/Haptics",
            ])
        // Installed: the copy beside its `bin` folder comes after the working folder's.
        let installed = HapticResourceDirectory.searchOrder(
            environment: [:], currentDirectory: "/", executablePath: "/opt/game/bin/haptics"
        ).map(\.path)
        #expect(
            installed == [
                "/Haptics", "/opt/game/share/haptics/Haptics", "/usr/local/share/haptics/Haptics",
                "/usr/share/haptics/Haptics",
            ])
    }

    /// A folder reached two ways (the program run from its repository's root: the working folder, the repository
    /// above it, and the repository above the program) is listed once, at its first place.
    @Test func aFolderReachedTwoWaysIsListedOnce() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("// swift-tools-version: 6.0\n", to: "repo/Package.swift")
        let repo = scratch.url.appendingPathComponent("repo").path
        let order = HapticResourceDirectory.searchOrder(
            environment: [:], currentDirectory: repo, executablePath: repo + "/.build/debug/game"
        ).map(\.path)
        #expect(order.filter { $0 == repo + "/Haptics" }.count == 1, "\(order)")
        #expect(order.first == repo + "/Haptics")
    }

    @Test func locateFindsTheRepositoryFolderFromASubdirectory() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("", to: "repo/Package.swift")
        _ = try scratch.write("{}", to: "repo/Haptics/thud.ahap")
        let found = HapticResourceDirectory.locate(
            environment: [:], currentDirectory: scratch.url.path + "/repo/Sources", executablePath: nil)
        #expect(found?.directory.path == scratch.url.path + "/repo/Haptics")
        // The override wins; one that names no folder finds none, rather than a folder the user did not mean.
        let overridden = HapticResourceDirectory.locate(
            environment: ["HAPTICS_DIR": AppAssets.folder.path], currentDirectory: scratch.url.path + "/repo",
            executablePath: nil)
        #expect(overridden?.directory.path == AppAssets.folder.path)
        let missing = HapticResourceDirectory.locate(
            environment: ["HAPTICS_DIR": "/nonexistent"], currentDirectory: scratch.url.path + "/repo",
            executablePath: nil)
        #expect(missing == nil)
    }

    @Test func aFolderReachedThroughALinkIsFoundAsTheFolderItPointsAt() throws {
        // A packaged `/usr/share/haptics/Haptics -> ...`, `HAPTICS_DIR=~/link`: the link is the folder.
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("{}", to: "assets/thud.ahap")
        let link = scratch.url.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: scratch.url.appendingPathComponent("assets").path)
        let found = HapticResourceDirectory.locate(
            environment: ["HAPTICS_DIR": link], currentDirectory: "/", executablePath: nil)
        #expect(found?.directory.path == link)
        #expect(found?.url(forResource: "thud", withExtension: "ahap") != nil)
    }

    /// `haptics play ARGUMENT` run in `folder`: where the pattern is looked for.
    static func lookup(
        _ argument: String, in folder: String, environment: [String: String] = [:]
    ) -> HapticResourceLookup {
        HapticResourceDirectory.locateFile(
            argument, withExtension: "ahap", environment: environment, currentDirectory: folder, executablePath: nil)
    }

    @Test func aFileArgumentIsAPathWhenOneExistsOrItHasAFolderElseANameInTheFoundFolder() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("{}", to: "work/Haptics/thud.ahap")
        _ = try scratch.write("{}", to: "work/mine.ahap")
        let work = scratch.url.path + "/work"
        func lookup(_ argument: String, environment: [String: String] = [:]) -> HapticResourceLookup {
            Self.lookup(argument, in: work, environment: environment)
        }
        #expect(lookup("mine.ahap").file?.path == work + "/mine.ahap")
        #expect(lookup("thud").file?.path == work + "/Haptics/thud.ahap")
        #expect(lookup("thud.ahap").file?.path == work + "/Haptics/thud.ahap")
        #expect(lookup("Haptics/thud.ahap").file?.path == work + "/Haptics/thud.ahap")
        let missing = lookup("nope")
        #expect(missing.file == nil)
        #expect(missing.folder?.directory.path == work + "/Haptics")
        #expect(!missing.isPath)
        // With a folder in it, an argument is a path only, which the caller can say: a name never has one.
        _ = try scratch.write("{}", to: "work/Haptics/ui/tap.ahap")
        for path in ["/thud.ahap", "./thud", "../thud.ahap", "ui/tap"] {
            let missingPath = lookup(path)
            #expect(missingPath.file == nil && missingPath.isPath, "\(path)")
        }
        // Only the first existing folder is searched, as for HapticManager.shared: the override hides ./Haptics.
        let overridden = lookup("thud", environment: ["HAPTICS_DIR": scratch.url.path])
        #expect(overridden.file == nil)
        #expect(overridden.searched.first?.path == scratch.url.path)
    }

    /// `haptics play here/link/../p.ahap`, `link` leading to `../other/deeper`, plays `other/p.ahap`, the file the
    /// system opens, as `haptics validate` reads it: a URL relative to the current folder dropped `link/..` as
    /// text and played `here/p.ahap` (until 7 December). A path without `..` stays relative to the folder, as typed.
    @Test func aPathThroughASymbolicLinkAndDotDotIsTheFileTheSystemOpens() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write(#"{"decoy":1}"#, to: "here/p.ahap")
        _ = try scratch.write("{}", to: "other/p.ahap")
        _ = try scratch.write("{}", to: "other/deeper/.keep")
        try FileManager.default.createSymbolicLink(
            atPath: scratch.url.path + "/here/link", withDestinationPath: "../other/deeper")
        let found = Self.lookup("here/link/../p.ahap", in: scratch.url.path)
        let file = try #require(found.file)
        #expect(try Data(contentsOf: file) == Data("{}".utf8), "\(file.path)")
        #expect(file.resolvingSymlinksInPath().path == scratch.url.appendingPathComponent("other/p.ahap").path)
        #expect(Self.lookup("here/p.ahap", in: scratch.url.path).file?.relativePath == "here/p.ahap")
    }

    /// `mkdir heartbeat`, or a program called `heartbeat`, in the current folder must not hide the resource
    /// `heartbeat` (`haptics render heartbeat` said "it is a directory"); an extensionless file is taken only when
    /// there is no resource of its name, and a path with a folder in it stays a path, a folder included.
    @Test func aFolderOrExtensionlessFileNamedLikeAResourceDoesNotHideIt() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        _ = try scratch.write("{}", to: "work/Haptics/heartbeat.ahap")
        _ = try scratch.write("{}", to: "work/thud")
        let work = scratch.url.path + "/work"
        try FileManager.default.createDirectory(atPath: work + "/heartbeat", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: work + "/gone.ahap", withIntermediateDirectories: false)
        func lookup(_ argument: String) -> HapticResourceLookup { Self.lookup(argument, in: work) }
        #expect(lookup("heartbeat").file?.path == work + "/Haptics/heartbeat.ahap")
        _ = try scratch.write("{}", to: "work/heartbeat-file")
        try FileManager.default.moveItem(atPath: work + "/heartbeat-file", toPath: work + "/heartbeat/x")
        #expect(lookup("heartbeat").file?.path == work + "/Haptics/heartbeat.ahap")
        #expect(lookup("thud").file?.path == work + "/thud", "no resource thud: the file of that name")
        _ = try scratch.write("{}", to: "work/Haptics/thud.ahap")
        #expect(lookup("thud").file?.path == work + "/Haptics/thud.ahap", "the resource first")
        #expect(lookup("gone.ahap").file == nil, "a folder named like a pattern file is not one")
        #expect(lookup("./heartbeat").file?.path == work + "/heartbeat", "a path stays a path")
    }
}
