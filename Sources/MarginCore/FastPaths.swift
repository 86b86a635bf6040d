import Foundation

/// The fast paths `MARGIN_PLAIN` turns off (a comma list, or `all` for every one), so that the
/// bench can measure each against the plain way and the tests can check both answer the same.
public enum FastPaths {
    /// The names `MARGIN_PLAIN` gives, as written.
    public static let named: Set<String> = Set(
        (ProcessInfo.processInfo.environment["MARGIN_PLAIN"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        })

    /// Whether the fast path `name` is taken (it is unless `MARGIN_PLAIN` names it or `all`).
    public static func isOn(_ name: String) -> Bool { !named.contains(name) && !named.contains("all") }
}
