import { createPool } from "@/lib/db/pool";
import { freshDatabase } from "./engines";
