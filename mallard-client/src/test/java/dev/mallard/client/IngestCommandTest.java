// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import java.util.Map;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption;
import org.junit.jupiter.api.Test;

class IngestCommandTest {
    @Test
    void theHandWrittenCommandIsWhatFlightSqlsOwnClassesRead() throws Exception {
        Map<String, String> options = Map.of("ingestion_queue", "events", "x-dd-producer-id", "p-1", "x-dd-producer-batch-id", "1700000000000123",
                "x-dd-partition", "day,région");
        Any any = Any.parseFrom(IngestCommand.encode(options));
        assertThat(any.is(CommandStatementIngest.class)).isTrue();
        CommandStatementIngest command = any.unpack(CommandStatementIngest.class);
        assertThat(command.getOptionsMap()).isEqualTo(options);
        assertThat(command.getTable()).isEmpty();
        assertThat(command.getTableDefinitionOptions().getIfNotExist()).isEqualTo(TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE);
        assertThat(command.getTableDefinitionOptions().getIfExists()).isEqualTo(TableExistsOption.TABLE_EXISTS_OPTION_APPEND);
    }
}
