// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * A Nexmark-style stream for {@code bench views}: {@code bid}, {@code auction} and {@code person} tables generated
 * with DuckDB's {@code range} (per 50 events 46 bids, 3 auctions, 1 person, as Nexmark's generator mixes them;
 * event time {@code date_time} in milliseconds, 10 per bid), and four of Nexmark's queries as materialized views,
 * windows being 10-second tumbling windows ({@code date_time // 10000}). Each view's single-row write appends one
 * event to the stream it reads; its batch appends 10k-row batches of bids (auctions for the join views).
 */
final class Nexmark {
    /**
     * One query: the stream table its single-row and batch writes append to, the single-row INSERT ({@code ?} is the
     * event's number) and the batch's INSERT (see {@link #batch}).
     */
    record View(String name, String sql, String insertOne, String insertBatch) {}

    private static final String BID_ONE = "INSERT INTO bid VALUES (hash(?) % {auctions}, hash(? + 1) % {persons}, 100 + hash(? + 2) % 10000, "
            + "'web', ? * 10)";
    private static final String BID_BATCH = "INSERT INTO bid SELECT hash(range) % {auctions}, hash(range + 1) % {persons}, "
            + "100 + hash(range + 2) % 10000, 'web', range * 10 FROM range({first}, {first} + {rows})";
    private static final String AUCTION_ONE = "INSERT INTO auction VALUES (?, hash(?) % {persons}, hash(? + 3) % 20, 1000 + hash(? + 4) % 1000, "
            + "? * 10, 'item')";
    private static final String AUCTION_BATCH = "INSERT INTO auction SELECT range, hash(range) % {persons}, hash(range + 3) % 20, "
            + "1000 + hash(range + 4) % 1000, range * 10, 'item' FROM range({first}, {first} + {rows})";
    private static final String PERSON_ONE = "INSERT INTO person VALUES (?, 'p' || ?, 'city', "
            + "['or', 'id', 'ca', 'wa', 'ny'][1 + CAST(hash(?) % 5 AS BIGINT)], ? * 10)";

    private Nexmark() {}

    private static String sized(String sql, long auctions, long persons) {
        return sql.replace("{auctions}", Long.toString(auctions)).replace("{persons}", Long.toString(persons));
    }

    /** A batch's INSERT of {@code rows} events numbered from {@code first}. */
    static String batch(View view, long first, int rows) {
        return view.insertBatch().replace("{first}", Long.toString(first)).replace("{rows}", Integer.toString(rows));
    }

    /** The stream of {@code bids} bids, with the auctions and persons generated beside them. */
    static void load(Statement sql, long bids) throws SQLException {
        long auctions = Math.max(1, bids * 3 / 46);
        long persons = Math.max(1, bids / 46);
        sql.execute("CREATE TABLE person (id BIGINT, name VARCHAR, city VARCHAR, state VARCHAR, date_time BIGINT)");
        sql.execute("CREATE TABLE auction (id BIGINT, seller BIGINT, category BIGINT, reserve BIGINT, date_time BIGINT, item_name VARCHAR)");
        sql.execute("CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, date_time BIGINT)");
        sql.execute("INSERT INTO person SELECT range, 'p' || range, 'city', ['or', 'id', 'ca', 'wa', 'ny'][1 + CAST(hash(range) % 5 AS BIGINT)], "
                + "range * 460 FROM range(" + persons + ")");
        sql.execute("INSERT INTO auction SELECT range, hash(range) % " + persons + ", hash(range + 3) % 20, 1000 + hash(range + 4) % 1000, "
                + "range * 153, 'item' FROM range(" + auctions + ")");
        sql.execute("INSERT INTO bid SELECT hash(range) % " + auctions + ", hash(range + 1) % " + persons + ", 100 + hash(range + 2) % 10000, "
                + "'web', range * 10 FROM range(" + bids + ")");
    }

    /** q3, q5, q7 and q8 over a stream of {@code bids} bids. */
    static List<View> views(long bids) {
        long auctions = Math.max(1, bids * 3 / 46);
        long persons = Math.max(1, bids / 46);
        String bidOne = sized(BID_ONE, auctions, persons);
        String bidBatch = sized(BID_BATCH, auctions, persons);
        String auctionOne = sized(AUCTION_ONE, auctions, persons);
        String auctionBatch = sized(AUCTION_BATCH, auctions, persons);
        return List.of(
                // q3, local item suggestion: sellers in some states offering in one category (a join).
                new View("nexmark_q3_local_items", "SELECT p.name, p.city, p.state, a.id FROM auction a JOIN person p ON a.seller = p.id "
                        + "WHERE a.category = 10 AND p.state IN ('or', 'id', 'ca')", auctionOne, auctionBatch),
                // q5, hot items: the auctions with the most bids in a window, top 10 (ties broken by window and auction).
                new View("nexmark_q5_hot_items", "SELECT w, auction, bids FROM (SELECT date_time // 10000 AS w, auction, count(*) AS bids "
                        + "FROM bid GROUP BY ALL) AS c ORDER BY bids DESC, w DESC, auction LIMIT 10", bidOne, bidBatch),
                // q7, highest bid: per window the bids at the window's maximum price.
                new View("nexmark_q7_highest_bid", "SELECT b.auction, b.price, b.bidder, b.date_time FROM bid b JOIN (SELECT date_time // 10000 AS w, "
                        + "max(price) AS top FROM bid GROUP BY 1) AS m ON b.date_time // 10000 = m.w AND b.price = m.top", bidOne, bidBatch),
                // q8, monitor new users: people who opened an auction in the window they registered in.
                new View("nexmark_q8_new_sellers", "SELECT p.id, p.name, a.reserve FROM person p JOIN auction a ON p.id = a.seller "
                        + "AND p.date_time // 10000 = a.date_time // 10000", PERSON_ONE, auctionBatch));
    }
}
