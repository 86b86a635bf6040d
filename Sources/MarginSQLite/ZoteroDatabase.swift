import Foundation
import GRDB
import MarginCore

/// Reads a copy of a Zotero database with GRDB, read-only. Types, fields and creator types are
/// joined by name (`itemTypes.typeName`, `fields.fieldName`, `creatorTypes.creatorType`).
public struct ZoteroDatabase: ZoteroReader {
    /// The highest `compatibility` version this reader knows (Zotero's `_maxCompatibility` when
    /// its `userdata` schema was 129); a database above it was changed in ways older readers
    /// must not assume.
    public static let knownCompatibility = 9
    public static let knownSchema = 129

    public init() {}

    public func read(databaseAt path: String) throws -> ZoteroData {
        // SQLite set up as for a library (this may be the process's first connection).
        _ = LibraryDatabase.memoryStatisticsOff
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        configuration.label = "zotero"
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in try Self.read(db) }
        } catch let error as DatabaseError {
            throw MarginError.invalidBackup(
                "it is not a Zotero database margin can read: \(error.message ?? "\(error)")")
        }
    }

    /// Tables and columns read, checked before anything is.
    static let needed: [String: [String]] = [
        "version": ["schema", "version"],
        "libraries": ["libraryID", "type"],
        "itemTypes": ["itemTypeID", "typeName"],
        "fields": ["fieldID", "fieldName"],
        "items": ["itemID", "itemTypeID", "dateAdded", "dateModified", "libraryID", "key"],
        "itemData": ["itemID", "fieldID", "valueID"],
        "itemDataValues": ["valueID", "value"],
        "creators": ["creatorID", "firstName", "lastName", "fieldMode"],
        "creatorTypes": ["creatorTypeID", "creatorType"],
        "itemCreators": ["itemID", "creatorID", "creatorTypeID", "orderIndex"],
        "tags": ["tagID", "name"],
        "itemTags": ["itemID", "tagID"],
        "collections": ["collectionID", "collectionName", "parentCollectionID", "libraryID", "key"],
        "collectionItems": ["collectionID", "itemID"],
        "itemNotes": ["itemID", "parentItemID", "note"],
        "itemAttachments": ["itemID", "parentItemID", "linkMode", "contentType", "path"],
        "itemAnnotations": [
            "itemID", "parentItemID", "type", "authorName", "text", "comment", "color", "pageLabel", "sortIndex",
            "position",
        ],
        "deletedItems": ["itemID"],
    ]

    private static func read(_ db: Database) throws -> ZoteroData {
        for (table, columns) in needed.sorted(by: { $0.key < $1.key }) {
            guard try db.tableExists(table) else {
                throw MarginError.invalidBackup("it is not a Zotero database: it has no table \(table)")
            }
            let have = Set(try db.columns(in: table).map(\.name))
            if let missing = columns.first(where: { !have.contains($0) }) {
                throw MarginError.invalidBackup(
                    "it is not a Zotero database margin can read: \(table) has no column \(missing)")
            }
        }
        let versions = Dictionary(
            try Row.fetchAll(db, sql: "SELECT schema, version FROM version").map {
                (($0["schema"] as String?) ?? "", ($0["version"] as Int?) ?? 0)
            }, uniquingKeysWith: { first, _ in first })
        let schema = versions["userdata"] ?? 0
        let compatibility = versions["compatibility"] ?? 0
        guard compatibility <= knownCompatibility else {
            throw MarginError.invalidBackup(
                "it was made by a newer Zotero (schema \(schema), compatibility \(compatibility)); this margin reads Zotero databases up to schema \(knownSchema) (compatibility \(knownCompatibility))"
            )
        }
        let groups =
            try db.tableExists("groups")
            ? Dictionary(
                try Row.fetchAll(db, sql: "SELECT libraryID, groupID, name FROM groups").map {
                    (($0["libraryID"] as Int64?) ?? 0, (($0["groupID"] as Int64?) ?? 0, ($0["name"] as String?) ?? ""))
                }, uniquingKeysWith: { first, _ in first }) : [:]
        let libraries = try Row.fetchAll(db, sql: "SELECT libraryID, type FROM libraries ORDER BY libraryID").compactMap
        {
            row -> ZoteroData.Library? in
            let id: Int64 = row["libraryID"]
            let type: String = row["type"] ?? ""
            guard type == "user" || type == "group" else { return nil }
            return ZoteroData.Library(id: id, type: type, groupID: groups[id]?.0, groupName: groups[id]?.1)
        }
        // Tags and fields of every item, by item.
        var tags = [Int64: [String]]()
        for row in try Row.fetchAll(
            db, sql: "SELECT it.itemID, t.name FROM itemTags it JOIN tags t ON t.tagID = it.tagID ORDER BY t.name")
        {
            tags[row["itemID"], default: []].append(row["name"] ?? "")
        }
        var fields = [Int64: [String: String]]()
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT d.itemID, f.fieldName, v.value FROM itemData d
                JOIN fields f ON f.fieldID = d.fieldID JOIN itemDataValues v ON v.valueID = d.valueID
                """)
        {
            guard let name: String = row["fieldName"] else { continue }
            fields[row["itemID"], default: [:]][name] = (row["value"] as DatabaseValue).asText
        }
        var creators = [Int64: [ZoteroData.Creator]]()
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, ct.creatorType FROM itemCreators ic
                JOIN creators c ON c.creatorID = ic.creatorID JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID
                ORDER BY ic.itemID, ic.orderIndex
                """)
        {
            creators[row["itemID"], default: []].append(
                ZoteroData.Creator(
                    firstName: row["firstName"] ?? "", lastName: row["lastName"] ?? "",
                    singleField: (row["fieldMode"] as Int?) == 1, type: row["creatorType"] ?? ""))
        }
        var common = [Int64: ZoteroData.Common]()
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT i.itemID, i.key, i.libraryID, i.dateAdded, i.dateModified, t.typeName,
                    i.itemID IN (SELECT itemID FROM deletedItems) AS trashed
                FROM items i JOIN itemTypes t ON t.itemTypeID = i.itemTypeID
                """)
        {
            let id: Int64 = row["itemID"]
            common[id] = ZoteroData.Common(
                id: id, key: row["key"] ?? "", libraryID: row["libraryID"] ?? 0, typeName: row["typeName"] ?? "",
                dateAdded: zoteroDate(row["dateAdded"]), dateModified: zoteroDate(row["dateModified"]),
                trashed: row["trashed"] ?? false)
        }
        let special: Set<String> = ["attachment", "note", "annotation"]
        let items = common.values.filter { !special.contains($0.typeName) }.sorted { $0.id < $1.id }.map {
            ZoteroData.Item(
                common: $0, fields: fields[$0.id] ?? [:], creators: creators[$0.id] ?? [], tags: tags[$0.id] ?? [])
        }
        let attachments = try Row.fetchAll(
            db, sql: "SELECT itemID, parentItemID, linkMode, contentType, path FROM itemAttachments ORDER BY itemID"
        ).compactMap { row -> ZoteroData.Attachment? in
            guard let item = common[row["itemID"]] else { return nil }
            return ZoteroData.Attachment(
                common: item, parentID: row["parentItemID"], linkMode: row["linkMode"] ?? -1,
                contentType: row["contentType"], path: row["path"], title: fields[item.id]?["title"],
                tags: tags[item.id] ?? [])
        }
        let notes = try Row.fetchAll(db, sql: "SELECT itemID, parentItemID, note FROM itemNotes ORDER BY itemID")
            .compactMap { row -> ZoteroData.Note? in
                guard let item = common[row["itemID"]], item.typeName == "note" else { return nil }
                return ZoteroData.Note(common: item, parentID: row["parentItemID"], html: row["note"] ?? "")
            }
        let annotations = try Row.fetchAll(
            db,
            sql: """
                SELECT itemID, parentItemID, type, authorName, text, comment, color, pageLabel, sortIndex, position
                FROM itemAnnotations ORDER BY parentItemID, sortIndex, itemID
                """
        ).compactMap { row -> ZoteroData.Annotation? in
            guard let item = common[row["itemID"]] else { return nil }
            return ZoteroData.Annotation(
                common: item, attachmentID: row["parentItemID"] ?? 0, type: row["type"] ?? 0,
                authorName: row["authorName"], text: row["text"], comment: row["comment"], color: row["color"],
                pageLabel: row["pageLabel"], sortIndex: row["sortIndex"] ?? "", position: row["position"] ?? "{}",
                tags: tags[item.id] ?? [])
        }
        var filed = [Int64: [Int64]]()
        for row in try Row.fetchAll(db, sql: "SELECT collectionID, itemID FROM collectionItems ORDER BY orderIndex") {
            filed[row["collectionID"], default: []].append(row["itemID"])
        }
        let deletedCollections =
            try db.tableExists("deletedCollections")
            ? Set(try Int64.fetchAll(db, sql: "SELECT collectionID FROM deletedCollections")) : []
        let collections = try Row.fetchAll(
            db,
            sql:
                "SELECT collectionID, collectionName, parentCollectionID, libraryID, key FROM collections ORDER BY collectionID"
        ).compactMap { row -> ZoteroData.Collection? in
            let id: Int64 = row["collectionID"]
            guard !deletedCollections.contains(id) else { return nil }
            return ZoteroData.Collection(
                id: id, key: row["key"] ?? "", name: row["collectionName"] ?? "", parentID: row["parentCollectionID"],
                libraryID: row["libraryID"] ?? 0, itemIDs: filed[id] ?? [])
        }
        return ZoteroData(
            schema: schema, compatibility: compatibility, libraries: libraries, collections: collections, items: items,
            attachments: attachments, notes: notes, annotations: annotations)
    }
}

/// Zotero's timestamps: "YYYY-MM-DD HH:MM:SS" in UTC.
private func zoteroDate(_ text: String?) -> Date {
    guard let text else { return Date(timeIntervalSince1970: 0) }
    var components = DateComponents()
    components.calendar = Calendar(identifier: .gregorian)
    components.timeZone = TimeZone(secondsFromGMT: 0)
    let parts = text.split(whereSeparator: { "- :T".contains($0) }).compactMap { Int($0.prefix(4)) }
    guard parts.count >= 3 else { return Date(timeIntervalSince1970: 0) }
    components.year = parts[0]
    components.month = parts[1]
    components.day = parts[2]
    components.hour = parts.count > 3 ? parts[3] : 0
    components.minute = parts.count > 4 ? parts[4] : 0
    components.second = parts.count > 5 ? parts[5] : 0
    return components.date ?? Date(timeIntervalSince1970: 0)
}

extension DatabaseValue {
    /// A field's value as text (Zotero stores numbers as numbers in `itemDataValues`).
    fileprivate var asText: String {
        switch storage {
        case .string(let string): return string
        case .int64(let number): return String(number)
        case .double(let number): return String(number)
        case .blob(let data): return String(decoding: data, as: UTF8.self)
        case .null: return ""
        }
    }
}
