// Where named patterns live: the Linux stand-in for `Bundle.main.url(forResource:withExtension:)`.
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Finds the file of a named resource (`thud` -> `.../Haptics/thud.ahap`). Injectable, so tests and apps
/// can point the manager at their own folder.
public protocol HapticResourceResolving: Sendable {
    /// The file for `name` with `fileExtension`, or `nil` when there is none.
    func url(forResource name: String, withExtension fileExtension: String) -> URL?
}

/// The resolver `HapticManager.shared` uses: the first `Haptics/` folder of `HapticResourceDirectory.searchOrder`,
/// looked up on each call (a few `stat`s, and only when a pattern is loaded), so a folder installed while the
/// program runs is found; it resolves nothing when there is no such folder.
public struct DefaultHapticResourceResolver: HapticResourceResolving {
    public init() {}

    public func url(forResource name: String, withExtension fileExtension: String) -> URL? {
        HapticResourceDirectory.locate()?.url(forResource: name, withExtension: fileExtension)
    }
}
