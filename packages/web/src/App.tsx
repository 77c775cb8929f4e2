import { Navigate, Route, Routes } from "react-router";
import { SignedIn } from "./components/SignedIn.js";
import { Activity } from "./routes/Activity.js";
import { Account } from "./routes/Account.js";
import { Audit } from "./routes/Audit.js";
import { ForgotPassword } from "./routes/ForgotPassword.js";
import { ResetPassword } from "./routes/ResetPassword.js";
import { Verify } from "./routes/Verify.js";
import { ApiKeys } from "./routes/ApiKeys.js";
import { Invitation } from "./routes/Invitation.js";
import { RecordPage } from "./routes/Record.js";
import { Request } from "./routes/Request.js";
import { SignIn } from "./routes/SignIn.js";
import { Stores } from "./routes/Stores.js";
import { Team } from "./routes/Team.js";
import { NotFound } from "./routes/NotFound.js";

/** The console's routes; the server answers each of these paths with this app. */
export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignIn />} />
      <Route path="/invite/:token" element={<Invitation />} />
      <Route path="/forgot-password" element={<ForgotPassword />} />
      <Route path="/reset/:token" element={<ResetPassword />} />
      <Route path="/verify/:token" element={<Verify />} />
      <Route element={<SignedIn />}>
        <Route path="/" element={<Navigate to="/settings/api-keys" replace />} />
        <Route path="/settings" element={<Navigate to="/settings/api-keys" replace />} />
        <Route path="/settings/api-keys" element={<ApiKeys />} />
        <Route path="/stores" element={<Stores />} />
        <Route path="/stores/:storeId/activity" element={<Activity />} />
        <Route path="/stores/:storeId/requests/:id" element={<Request />} />
        <Route path="/stores/:storeId/records/:kind/:externalId" element={<RecordPage />} />
        <Route path="/team" element={<Team />} />
        <Route path="/audit" element={<Audit />} />
        <Route path="/account" element={<Account />} />
      </Route>
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}
