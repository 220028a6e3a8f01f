/** The coordinator conformance suite over the direct database transport. */
import { coordinatorConformance } from "./coordinator.conformance";
import { directCoordinator } from "./direct-coordinator";

coordinatorConformance("direct", (db) => directCoordinator(db.pool));
